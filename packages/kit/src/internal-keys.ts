import { createPrivateKey, createPublicKey, type KeyObject, randomBytes } from 'node:crypto';
import { SYNC_CALLS, type SyncCall } from '@lead-capture/contracts';
import { ConfigError, parsed } from './config.js';

/**
 * The keys of internal identities (Ed25519). Each signer holds its own private key: the gateway's
 * signs users' identities and the clients it forwards; a calling service's signs only that
 * service's own identity. A verifier holds public keys only, and trusts each for what it may sign
 * (identity.ts): stealing one service's key mints neither a user's identity nor another service's.
 */

/** The signer of users' identities (and of the clients it forwards). */
export const GATEWAY_SIGNER = 'gateway';

/** Every process that signs internal identities: the gateway, and each service that calls another. */
export const INTERNAL_SIGNERS: readonly string[] = [
  GATEWAY_SIGNER,
  ...new Set(SYNC_CALLS.map(({ caller }) => caller)),
];

const KEY_BYTES = 32;
/** DER prefixes of an Ed25519 private key (PKCS#8) and public key (SPKI) before their 32 raw bytes. */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
const BASE64URL_KEY = /^[A-Za-z0-9_-]{43}$/;

function rawKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!BASE64URL_KEY.test(trimmed)) return undefined;
  const bytes = Buffer.from(trimmed, 'base64url');
  return bytes.length === KEY_BYTES ? bytes : undefined;
}

/** A private key from its 32 bytes (base64url, what `pnpm keys` prints); undefined when malformed. */
export function privateKeyFrom(text: string): KeyObject | undefined {
  const seed = rawKey(text);
  if (!seed) return undefined;
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
}

/** A public key from its 32 bytes (base64url); undefined when malformed. */
export function publicKeyFrom(text: string): KeyObject | undefined {
  const bytes = rawKey(text);
  if (!bytes) return undefined;
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, bytes]), format: 'der', type: 'spki' });
}

/** The public half of a key (private or public) as base64url, as INTERNAL_PUBLIC_KEYS lists it. */
export function publicKeyText(key: KeyObject): string {
  const { x } = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' });
  if (typeof x !== 'string') throw new Error('Not an Ed25519 key');
  return x;
}

/** A new private key: 32 bytes from the CSPRNG, base64url (any 32 bytes are an Ed25519 key). */
export function generateSigningKey(): string {
  return randomBytes(KEY_BYTES).toString('base64url');
}

/** One process's signing key and the name it signs as (the token's `kid`). */
export interface InternalSigner {
  readonly name: string;
  readonly key: KeyObject;
}

export function internalSigner(name: string, privateKey: string | KeyObject): InternalSigner {
  const key = typeof privateKey === 'string' ? privateKeyFrom(privateKey) : privateKey;
  if (key?.type !== 'private' || key.asymmetricKeyType !== 'ed25519') {
    throw new Error(`The signing key of ${name} is not an Ed25519 private key`);
  }
  return { name, key };
}

export type InternalPublicKeys = ReadonlyMap<string, KeyObject>;

const SIGNER_NAME = /^[a-z][a-z0-9-]*$/;

/** `gateway:<key>,source:<key>,...` -> the public keys by signer; undefined when malformed. */
export function parseInternalPublicKeys(text: string): Map<string, KeyObject> | undefined {
  const keys = new Map<string, KeyObject>();
  for (const entry of text.split(',')) {
    const [name = '', value = '', ...rest] = entry.trim().split(':');
    const key = publicKeyFrom(value);
    if (!SIGNER_NAME.test(name) || !key || rest.length > 0 || keys.has(name)) return undefined;
    keys.set(name, key);
  }
  return keys;
}

/** The INTERNAL_PUBLIC_KEYS text of these signers' (or public) keys. */
export function formatInternalPublicKeys(keys: Iterable<readonly [string, KeyObject]>): string {
  return [...keys].map(([name, key]) => `${name}:${publicKeyText(key)}`).join(',');
}

/** What a verifier believes: whose keys it holds, and which service calls are declared. */
export interface InternalTrust {
  /** The public key of `signer`, when this verifier trusts it at all. */
  keyOf(signer: string): KeyObject | undefined;
  /** Whether `caller` is declared to call `method path` on `callee` (SYNC_CALLS). */
  allowsCall(caller: string, callee: string, method: string, path: string): boolean;
}

/** The signers a service must trust: the gateway, and the callers the declared calls name for it. */
export function signersTrustedBy(service: string, calls: readonly SyncCall[] = SYNC_CALLS): string[] {
  return [
    GATEWAY_SIGNER,
    ...new Set(calls.filter(({ callee }) => callee === service).map(({ caller }) => caller)),
  ];
}

function routePattern(path: string): RegExp {
  const segments = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}$`);
}

export interface InternalTrustOptions {
  publicKeys: InternalPublicKeys;
  /** Default: SYNC_CALLS. */
  calls?: readonly SyncCall[];
  /** A service process: only the keys it must trust are kept (signersTrustedBy). */
  service?: string;
}

export function createInternalTrust(options: InternalTrustOptions): InternalTrust {
  const calls = (options.calls ?? SYNC_CALLS).map((call) => ({
    ...call,
    methods: new Set(call.methods.map((method) => method.toUpperCase())),
    pattern: routePattern(call.path),
  }));
  const kept =
    options.service === undefined ? undefined : new Set(signersTrustedBy(options.service, options.calls));
  const keys = new Map(
    [...options.publicKeys].filter(([name]) => kept === undefined || kept.has(name)),
  ) as InternalPublicKeys;
  return {
    keyOf: (signer) => keys.get(signer),
    allowsCall: (caller, callee, method, path) =>
      calls.some(
        (call) =>
          call.caller === caller &&
          call.callee === callee &&
          call.methods.has(method.toUpperCase()) &&
          call.pattern.test(path),
      ),
  };
}

/** Signers and the trust in them, made together. */
export interface InternalKeys {
  signer(name: string): InternalSigner | undefined;
  trust: InternalTrust;
  /** Every signer's public key, as INTERNAL_PUBLIC_KEYS lists them. */
  publicKeys: InternalPublicKeys;
}

/**
 * A fresh key for each signer, in memory: the embedded runtime (its calls never leave the process,
 * so no key needs to outlive it or be written anywhere) and tests.
 */
export function generateInternalKeys(
  options: { names?: readonly string[]; calls?: readonly SyncCall[] } = {},
): InternalKeys {
  const signers = new Map(
    (options.names ?? INTERNAL_SIGNERS).map((name) => [name, internalSigner(name, generateSigningKey())]),
  );
  const publicKeys = new Map(
    [...signers].map(([name, { key }]) => [name, createPublicKey(key)] as const),
  ) as InternalPublicKeys;
  return {
    signer: (name) => signers.get(name),
    trust: createInternalTrust({ publicKeys, calls: options.calls }),
    publicKeys,
  };
}

/** The variables of the distributed mode's internal identities (the embedded runtime makes its own). */
export const INTERNAL_KEY_CONFIG = {
  INTERNAL_SIGNING_KEY: parsed({
    optional: true,
    secret: true,
    expected: 'an Ed25519 private key: 32 bytes, base64url (pnpm keys)',
    parse: privateKeyFrom,
    doc: "This process's own Ed25519 private key (`pnpm keys` makes them): the gateway's signs users' identities; a service's only its own, for the calls chain.ts declares. Required by the gateway and by each calling service (source, webhooks); no other process holds one",
  }),
  INTERNAL_PUBLIC_KEYS: parsed({
    optional: true,
    expected: '<signer>:<Ed25519 public key, base64url>[,...] (pnpm keys)',
    parse: parseInternalPublicKeys,
    doc: "Every service: the signers' public keys, as `pnpm keys` prints them (gateway:KEY,source:KEY,webhooks:KEY). A service takes users' identities only from the gateway's key, and a service's identity only from that service's key on the calls chain.ts declares for it; required (with the gateway's key and the declared callers')",
  }),
};

/**
 * A service process's keys from its config: its signer (required when it calls another service)
 * and the trust of its verifier (the gateway's key and its declared callers' required). Throws a
 * ConfigError naming every problem.
 */
export function serviceKeysFromConfig(
  service: string,
  config: {
    INTERNAL_SIGNING_KEY: KeyObject | undefined;
    INTERNAL_PUBLIC_KEYS: InternalPublicKeys | undefined;
  },
  calls: readonly SyncCall[] = SYNC_CALLS,
): { signer: InternalSigner | undefined; trust: InternalTrust } {
  const problems: string[] = [];
  const publicKeys = config.INTERNAL_PUBLIC_KEYS ?? new Map<string, KeyObject>();
  const missing = signersTrustedBy(service, calls).filter((name) => !publicKeys.has(name));
  if (missing.length > 0) {
    problems.push(
      `INTERNAL_PUBLIC_KEYS lacks the key of ${missing.join(', ')}, which the ${service} service must trust (pnpm keys)`,
    );
  }
  const callees = [...new Set(calls.filter(({ caller }) => caller === service).map(({ callee }) => callee))];
  const signingKey = config.INTERNAL_SIGNING_KEY;
  if (signingKey === undefined && callees.length > 0) {
    problems.push(
      `INTERNAL_SIGNING_KEY is required: the ${service} service calls ${callees.join(', ')} (pnpm keys)`,
    );
  }
  const listed = publicKeys.get(service);
  if (signingKey && listed && publicKeyText(signingKey) !== publicKeyText(listed)) {
    problems.push(`INTERNAL_SIGNING_KEY is not the private half of ${service}'s key in INTERNAL_PUBLIC_KEYS`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    signer: signingKey ? internalSigner(service, signingKey) : undefined,
    trust: createInternalTrust({ publicKeys, calls, service }),
  };
}
