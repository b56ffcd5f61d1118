import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { SourceFormat } from '@lead-capture/contracts';

/** How far a signed timestamp (Calendly, Webflow) may be from our clock. */
export const SIGNATURE_TOLERANCE_MS = 5 * 60 * 1000;

export interface SignedDelivery {
  rawBody: Buffer;
  headers: IncomingHttpHeaders;
  /** The parsed payload, for the tools that authenticate with a key in the body. */
  payload: unknown;
  now: Date;
}

type Scheme = (secret: string, delivery: SignedDelivery) => string | undefined;

/**
 * Checks a delivery against the source's signing secret with the tool's own scheme; the reason it
 * fails (for the sender and the submissions log), or undefined when it is genuine. Every comparison
 * is constant-time, over the raw body as received.
 */
export function signatureProblem(
  format: SourceFormat,
  secret: string,
  delivery: SignedDelivery,
): string | undefined {
  return (SCHEMES[format] ?? hmacHexScheme('x-signature-256', 'sha256='))(secret, delivery);
}

/** The header (and prefix) each format's scheme reads, for the docs and the OpenAPI document. */
export const SIGNATURE_SCHEMES: Record<SourceFormat, string> = {
  generic: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  typeform: 'Typeform-Signature: sha256=<base64 HMAC-SHA256 of the body>',
  'facebook-lead-ads': 'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body, app secret>',
  'google-ads': 'google_key in the body equals the secret',
  'hubspot-forms': 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  linkedin: 'X-LI-Signature: hmacsha256=<hex HMAC-SHA256 of the body, client secret>',
  calendly: 'Calendly-Webhook-Signature: t=<unix s>,v1=<hex HMAC-SHA256 of "t.body">',
  tally: 'Tally-Signature: <base64 HMAC-SHA256 of the body>',
  jotform: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  elementor: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  'gravity-forms': 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  webflow: 'X-Webflow-Signature: <hex HMAC-SHA256 of "timestamp:body">, X-Webflow-Timestamp: <unix ms>',
  unbounce: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  mailchimp: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  zapier: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  elfsight: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  formstack: 'HandshakeKey in the body equals the secret',
};

const SCHEMES: Partial<Record<SourceFormat, Scheme>> = {
  'facebook-lead-ads': hmacHexScheme('x-hub-signature-256', 'sha256='),
  typeform: (secret, { rawBody, headers }) => {
    const sent = headerOf(headers, 'typeform-signature');
    if (sent === undefined) return 'Missing Typeform-Signature header';
    return sameSecret(sent, `sha256=${hmac(secret, rawBody).toString('base64')}`)
      ? undefined
      : 'Invalid signature';
  },
  tally: (secret, { rawBody, headers }) => {
    const sent = headerOf(headers, 'tally-signature');
    if (sent === undefined) return 'Missing Tally-Signature header';
    return sameSecret(sent, hmac(secret, rawBody).toString('base64')) ? undefined : 'Invalid signature';
  },
  linkedin: hmacHexScheme('x-li-signature', 'hmacsha256='),
  calendly: (secret, { rawBody, headers, now }) => {
    const sent = headerOf(headers, 'calendly-webhook-signature');
    if (sent === undefined) return 'Missing Calendly-Webhook-Signature header';
    const parts = Object.fromEntries(
      sent.split(',').map((part) => part.trim().split('=', 2) as [string, string]),
    );
    const timestamp = Number(parts.t);
    if (!Number.isFinite(timestamp) || parts.v1 === undefined)
      return 'Malformed Calendly-Webhook-Signature header';
    if (Math.abs(now.getTime() - timestamp * 1000) > SIGNATURE_TOLERANCE_MS)
      return 'Signature timestamp is too old';
    const expected = hmac(secret, Buffer.concat([Buffer.from(`${parts.t}.`), rawBody])).toString('hex');
    return sameSecret(parts.v1, expected) ? undefined : 'Invalid signature';
  },
  webflow: (secret, { rawBody, headers, now }) => {
    const sent = headerOf(headers, 'x-webflow-signature');
    const timestamp = headerOf(headers, 'x-webflow-timestamp');
    if (sent === undefined || timestamp === undefined)
      return 'Missing X-Webflow-Signature or X-Webflow-Timestamp header';
    if (!/^\d+$/.test(timestamp) || Math.abs(now.getTime() - Number(timestamp)) > SIGNATURE_TOLERANCE_MS) {
      return 'Signature timestamp is too old';
    }
    const expected = hmac(secret, Buffer.concat([Buffer.from(`${timestamp}:`), rawBody])).toString('hex');
    return sameSecret(sent, expected) ? undefined : 'Invalid signature';
  },
  'google-ads': bodyKeyScheme('google_key'),
  formstack: bodyKeyScheme('HandshakeKey'),
};

function hmacHexScheme(header: string, prefix: string): Scheme {
  return (secret, { rawBody, headers }) => {
    const sent = headerOf(headers, header);
    if (sent === undefined) return `Missing ${header} header`;
    return sameSecret(sent, `${prefix}${hmac(secret, rawBody).toString('hex')}`)
      ? undefined
      : 'Invalid signature';
  };
}

function bodyKeyScheme(field: string): Scheme {
  return (secret, { payload }) => {
    const sent =
      payload !== null && typeof payload === 'object'
        ? (payload as Record<string, unknown>)[field]
        : undefined;
    if (typeof sent !== 'string') return `Missing ${field}`;
    return sameSecret(sent, secret) ? undefined : `Invalid ${field}`;
  };
}

function hmac(secret: string, data: Buffer): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

/** Constant-time, whatever the lengths: both sides are hashed to 32 bytes first. */
export function sameSecret(sent: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(sent.trim()), digest(expected));
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? undefined : text;
}
