import {
  COMMON_CONFIG,
  type ConfigOf,
  INTERNAL_KEY_CONFIG,
  int,
  METRICS_CONFIG,
  oneOf,
  required,
  SERVICE_URL_CONFIG,
  secret,
  str,
  trustProxy,
} from '@lead-capture/kit';
import { STREAM_CONFIG } from './stream/config.js';

/** What the gateway reads in both modes (beside COMMON_CONFIG). */
export const GATEWAY_CONFIG = {
  JWT_SECRET: secret({
    optional: true,
    minBytes: 32,
    doc: 'Signs access tokens (HS256), >= 32 bytes; embedded mode: generated once under DATA_DIR/secrets/ when unset',
  }),
  ACCESS_TOKEN_TTL_SECONDS: int({ min: 60, max: 3600, default: 900, doc: 'Lifetime of an access token' }),
  REFRESH_TOKEN_TTL_DAYS: int({
    min: 1,
    max: 365,
    default: 30,
    doc: 'Lifetime of a refresh token; every refresh issues a new one with a new lifetime',
  }),
  ADMIN_EMAIL: str({
    optional: true,
    doc: 'E-mail of the first admin, created when no user exists (embedded default: admin@example.com)',
  }),
  ADMIN_PASSWORD: secret({
    optional: true,
    minBytes: 8,
    doc: 'Password of the first admin; embedded mode: generated and printed once when unset',
  }),
  ADMIN_NAME: str({ default: 'Admin', doc: 'Name of the first admin' }),
  RATE_LIMIT_MAX: int({
    min: 0,
    default: 100,
    doc: 'Requests per window and client IP on the API (0: no limit)',
  }),
  WEBHOOK_RATE_LIMIT_MAX: int({
    min: 0,
    default: 100,
    doc: 'Requests per window and client IP on /api/webhooks/ (0: no limit), counted apart from the API',
  }),
  RATE_LIMIT_WINDOW_MS: int({ min: 1000, default: 60_000, doc: 'Rate-limit window (sliding), in ms' }),
  AUDIT_LOG_RETENTION_DAYS: int({
    min: 1,
    max: 3650,
    default: 365,
    doc: 'Days an entry of the audit log (changes to users, API keys, settings, sequences, webhook tokens) is kept',
  }),
  TRUST_PROXY: trustProxy({
    default: false,
    doc: 'Proxies whose X-Forwarded-For gives the client IP: false, a hop count, or IPs / CIDR ranges',
  }),
  LOGIN_ATTEMPTS_PER_ACCOUNT: int({
    min: 0,
    default: 10,
    doc: 'Failed sign-ins per account (e-mail, known or not) from one client IP (IPv6: its /64) per LOGIN_ATTEMPTS_WINDOW_MS; past it 429 for that account from that IP only (0: no limit)',
  }),
  LOGIN_ATTEMPTS_PER_ADDRESS: int({
    min: 0,
    default: 100,
    doc: 'Sign-in attempts (any account, failed or not) per client IP (IPv6: its /64) per LOGIN_ATTEMPTS_WINDOW_MS; past it 429 (0: no limit)',
  }),
  LOGIN_ATTEMPTS_WINDOW_MS: int({
    min: 1000,
    default: 900_000,
    doc: 'Window (sliding) of LOGIN_ATTEMPTS_PER_ACCOUNT and LOGIN_ATTEMPTS_PER_ADDRESS, in ms',
  }),
  LOGIN_HASH_CONCURRENCY: int({
    min: 1,
    max: 64,
    default: 2,
    doc: 'Sign-in password checks (scrypt, ~128 MiB each) computed at once by one gateway process',
  }),
  LOGIN_HASH_QUEUE: int({
    min: 0,
    default: 16,
    doc: 'Sign-ins waiting for a password check; past it 503 with Retry-After',
  }),
  ...METRICS_CONFIG,
  ...STREAM_CONFIG,
  HSTS: oneOf(['https', 'always', 'off'] as const, {
    default: 'https',
    doc: 'Strict-Transport-Security (one year, subdomains): https = on answers to HTTPS requests (TLS, or X-Forwarded-Proto from a trusted proxy), always, or off',
  }),
};

/**
 * The distributed gateway process: secrets are required (its own signing key among them: it alone
 * signs users' identities), each service is reached at its URL.
 */
export const DISTRIBUTED_GATEWAY_CONFIG = {
  ...COMMON_CONFIG,
  ...GATEWAY_CONFIG,
  ...SERVICE_URL_CONFIG,
  JWT_SECRET: required(GATEWAY_CONFIG.JWT_SECRET),
  INTERNAL_SIGNING_KEY: required(INTERNAL_KEY_CONFIG.INTERNAL_SIGNING_KEY),
};

export type GatewayConfig = ConfigOf<typeof GATEWAY_CONFIG>;
