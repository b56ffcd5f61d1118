import helmet from '@fastify/helmet';
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
 * Browser-facing headers on every answer (API, errors, 404s, docs), by @fastify/helmet: the CSP
 * above, X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer, X-Frame-Options: DENY,
 * Cross-Origin-Opener-Policy / -Resource-Policy same-origin. Strict-Transport-Security only where it
 * means something: on answers to HTTPS requests (`request.protocol`, which believes
 * X-Forwarded-Proto only from a trusted proxy), or always / never as configured. Registered before
 * any route and before the guard, so refusals (401, 429) carry them too.
 */
export async function registerSecurityHeaders(
  app: FastifyInstance,
  options: { hsts: HstsMode },
): Promise<void> {
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: { ...CONTENT_SECURITY_POLICY } },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: false,
  });
  const { hsts } = options;
  if (hsts === 'off') return;
  app.addHook('onRequest', async (request, reply) => {
    if (hsts === 'always' || request.protocol === 'https')
      void reply.header('strict-transport-security', HSTS_VALUE);
  });
}
