import type { FastifyInstance } from 'fastify';

export type HstsMode = 'https' | 'always' | 'off';

/**
 * The Content-Security-Policy of every answer: the API's JSON, and the dashboard to come (a
 * same-origin bundled SPA: scripts and styles from its own files only, nothing inline, no eval, data
 * from this origin). Nobody may frame us; no plugins; forms and <base> stay on this origin.
 */
export const CONTENT_SECURITY_POLICY = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'"],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
} as const;

/**
 * /docs (swagger-ui): the same, except that its React components set inline styles. Its scripts
 * are its own static files (the validator badge is off, so no third-party image).
 */
export const DOCS_CONTENT_SECURITY_POLICY = serialize({
  ...CONTENT_SECURITY_POLICY,
  'style-src': ["'self'", "'unsafe-inline'"],
});

const HSTS_VALUE = 'max-age=31536000; includeSubDomains';

function serialize(directives: Record<string, readonly string[]>): string {
  return Object.entries(directives)
    .map(([name, values]) => `${name} ${values.join(' ')}`)
    .join('; ');
}

/**
 * The headers helmet 8 sets with the options this gateway used to give @fastify/helmet (the CSP
 * above, frameguard DENY, no referrer, no HSTS; its defaults otherwise), in its order and spelling.
 * Fixed strings, set once per answer: @fastify/helmet built the whole helmet middleware again (the
 * CSP parsed and checked) for every request, a tenth of a webhook's CPU.
 */
export const SECURITY_HEADERS: ReadonlyArray<readonly [name: string, value: string]> = [
  [
    'content-security-policy',
    Object.entries(CONTENT_SECURITY_POLICY)
      .map(([name, values]) => `${name} ${values.join(' ')}`)
      .join(';'),
  ],
  ['cross-origin-opener-policy', 'same-origin'],
  ['cross-origin-resource-policy', 'same-origin'],
  ['origin-agent-cluster', '?1'],
  ['referrer-policy', 'no-referrer'],
  ['x-content-type-options', 'nosniff'],
  ['x-dns-prefetch-control', 'off'],
  ['x-download-options', 'noopen'],
  ['x-frame-options', 'DENY'],
  ['x-permitted-cross-domain-policies', 'none'],
  ['x-xss-protection', '0'],
];

/**
 * Browser-facing headers on every answer (API, errors, 404s, docs): SECURITY_HEADERS.
 * Strict-Transport-Security only where it means something: on answers to HTTPS requests
 * (`request.protocol`, which believes X-Forwarded-Proto only from a trusted proxy), or always /
 * never as configured. Registered before any route and before the guard, so refusals (401, 429)
 * carry them too. Set on the raw response, as helmet did: a route's own header of the same name
 * (the /docs CSP) replaces it, and a hijacked answer (the live stream) carries them as well.
 */
export function registerSecurityHeaders(app: FastifyInstance, options: { hsts: HstsMode }): void {
  const { hsts } = options;
  // A callback hook: an async one costs a promise per answer.
  app.addHook('onRequest', (request, reply, done) => {
    const response = reply.raw;
    for (const [name, value] of SECURITY_HEADERS) response.setHeader(name, value);
    if (hsts === 'always' || (hsts === 'https' && request.protocol === 'https'))
      void reply.header('strict-transport-security', HSTS_VALUE);
    done();
  });
}
