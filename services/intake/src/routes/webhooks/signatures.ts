import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { SourceFormat } from '@lead-capture/contracts';

/**
 * How far a signed timestamp may be from our clock, as each tool's own documentation says: Webflow
 * rejects requests older than 5 minutes; Calendly's verification example uses 3 minutes.
 */
export const SIGNATURE_TOLERANCE_MS = {
  calendly: 3 * 60 * 1000,
  webflow: 5 * 60 * 1000,
} as const;

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
  linkedin: 'X-LI-Signature: <hex HMAC-SHA256 of "hmacsha256=" + body, client secret>',
  calendly: 'Calendly-Webhook-Signature: t=<unix s>,v1=<hex HMAC-SHA256 of "t.body"> (3 min)',
  tally: 'Tally-Signature: <base64 HMAC-SHA256 of the body>',
  jotform: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  elementor: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  'gravity-forms': 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  webflow:
    'X-Webflow-Signature: <hex HMAC-SHA256 of "timestamp:body">, X-Webflow-Timestamp: <unix ms> (5 min)',
  unbounce: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  mailchimp: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  zapier: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  elfsight: 'X-Signature-256: sha256=<hex HMAC-SHA256 of the body>',
  formstack: 'HandshakeKey in the body equals the secret',
};

/**
 * Each tool's own scheme, checked against its documentation (the URL beside each). Formats absent
 * here have no signature of their own that we could find documented, and take our generic
 * `X-Signature-256` scheme (for a relay such as Zapier or a proxy that signs for them):
 * - Jotform: no documentation of a Jotform webhook signature or shared secret was found.
 * - Elfsight: https://help.elfsight.com/article/1615-using-webhooks-in-your-form-widget describes the
 *   payload and no signature or secret.
 * - Formstack: besides `HandshakeKey` (below), Formstack's v2025 webhook API has an `hmac_secret`
 *   setting, but we found no official text stating its header, encoding or signed content, so it
 *   is not verified here.
 */
const SCHEMES: Partial<Record<SourceFormat, Scheme>> = {
  // https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads
  // `X-Hub-Signature-256: sha256=` + hex HMAC-SHA256 of the raw payload, keyed with the app secret.
  'facebook-lead-ads': hmacHexScheme('x-hub-signature-256', 'sha256='),
  // https://www.typeform.com/developers/webhooks/secure-your-webhooks/
  // `Typeform-Signature: sha256=` + base64 HMAC-SHA256 of the raw payload, keyed with the webhook secret.
  typeform: (secret, { rawBody, headers }) => {
    const sent = headerOf(headers, 'typeform-signature');
    if (sent === undefined) return 'Missing Typeform-Signature header';
    return sameSecret(sent, `sha256=${hmac(secret, rawBody).toString('base64')}`)
      ? undefined
      : 'Invalid signature';
  },
  // https://tally.so/help/webhooks ("Add a signing secret")
  // `Tally-Signature:` base64 HMAC-SHA256 of the JSON payload, no prefix and no timestamp. Tally's
  // example re-serialises the parsed body (JSON.stringify), which is the compact JSON Tally sends.
  tally: (secret, { rawBody, headers }) => {
    const sent = headerOf(headers, 'tally-signature');
    if (sent === undefined) return 'Missing Tally-Signature header';
    return sameSecret(sent, hmac(secret, rawBody).toString('base64')) ? undefined : 'Invalid signature';
  },
  // https://learn.microsoft.com/en-us/linkedin/shared/api-guide/webhook-validation
  // ("Requirements for Processing Notifications"): X-LI-Signature is the HMACSHA256 of the POST body
  // *prefixed by* `hmacsha256=`, keyed with the app's clientSecret. The page does not name the
  // encoding of this header; its challengeResponse on the same page is hex, so hex is expected. The
  // header value itself carries no prefix; one is tolerated since the sentence is read both ways.
  linkedin: (secret, { rawBody, headers }) => {
    const sent = headerOf(headers, 'x-li-signature');
    if (sent === undefined) return 'Missing X-LI-Signature header';
    const expected = hmac(secret, Buffer.concat([Buffer.from('hmacsha256='), rawBody])).toString('hex');
    const digest = sent
      .trim()
      .replace(/^hmacsha256=/i, '')
      .toLowerCase();
    return sameSecret(digest, expected) ? undefined : 'Invalid signature';
  },
  // https://developer.calendly.com/api-docs/overview/webhooks/webhook-signatures
  // `Calendly-Webhook-Signature: t=<unix s>,v1=<hex>`, v1 = hex HMAC-SHA256 of `${t}.${raw body}` keyed
  // with the webhook signing key. The 3-minute tolerance follows the page's verification example as
  // summarised elsewhere (hookdeck's Calendly guide); the stored copy of the page ends before it.
  calendly: (secret, { rawBody, headers, now }) => {
    const sent = headerOf(headers, 'calendly-webhook-signature');
    if (sent === undefined) return 'Missing Calendly-Webhook-Signature header';
    const parts = Object.fromEntries(
      sent.split(',').map((part) => part.trim().split('=', 2) as [string, string]),
    );
    const timestamp = Number(parts.t);
    if (!Number.isFinite(timestamp) || parts.v1 === undefined)
      return 'Malformed Calendly-Webhook-Signature header';
    if (Math.abs(now.getTime() - timestamp * 1000) > SIGNATURE_TOLERANCE_MS.calendly)
      return 'Signature timestamp is too old';
    const expected = hmac(secret, Buffer.concat([Buffer.from(`${parts.t}.`), rawBody])).toString('hex');
    return sameSecret(parts.v1, expected) ? undefined : 'Invalid signature';
  },
  // https://developers.webflow.com/data/docs/working-with-webhooks#validating-request-signatures and
  // the official SDK (webflow/js-webflow-api src/wrapper/WebhooksClient.ts, verifySignature):
  // `X-Webflow-Signature:` hex HMAC-SHA256 of `${X-Webflow-Timestamp}:${body}`, keyed with the
  // webhook's secret (the OAuth app's client secret); the timestamp is in milliseconds and a
  // request older than 5 minutes is to be rejected.
  webflow: (secret, { rawBody, headers, now }) => {
    const sent = headerOf(headers, 'x-webflow-signature');
    const timestamp = headerOf(headers, 'x-webflow-timestamp');
    if (sent === undefined || timestamp === undefined)
      return 'Missing X-Webflow-Signature or X-Webflow-Timestamp header';
    if (
      !/^\d+$/.test(timestamp) ||
      Math.abs(now.getTime() - Number(timestamp)) > SIGNATURE_TOLERANCE_MS.webflow
    ) {
      return 'Signature timestamp is too old';
    }
    const expected = hmac(secret, Buffer.concat([Buffer.from(`${timestamp}:`), rawBody])).toString('hex');
    return sameSecret(sent, expected) ? undefined : 'Invalid signature';
  },
  // https://developers.google.com/google-ads/webhook/docs/implementation: `google_key` in the JSON
  // body is the key the advertiser set on the lead form, "to verify the request is from Google".
  'google-ads': bodyKeyScheme('google_key'),
  // Formstack posts the webhook's shared secret back as the `HandshakeKey` field of the submission.
  // The official pages we could read (https://developers.formstack.com/docs/webhook-setup) do not
  // show the field; it is confirmed only by a third-party AsyncAPI summary (api-evangelist/formstack).
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
