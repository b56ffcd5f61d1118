import type { FastifyRequest } from 'fastify';
import { type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { GATEWAY_SIGNER, type InternalSigner, type InternalTrust } from './internal-keys.js';

/**
 * Who is calling, as established by the gateway (or, for a service, by itself) and carried to
 * services in a signed internal header.
 * Routes read it from `request.identity`; it is absent only on unauthenticated routes (the webhook).
 */
export interface Identity {
  /** How the caller authenticated; 'service' is another service calling an `/internal/` route. */
  method: 'jwt' | 'api-key' | 'service';
  /** The user behind the call: the logged-in user, the key's creator, or `service:<name>`. */
  userId: string;
  role: 'admin' | 'member';
  /** 'read' allows only GET/HEAD; 'full' allows everything the role allows. JWT sessions are 'full'. */
  scope: 'read' | 'full';
  /** Set when method is 'api-key'. */
  apiKeyId?: string;
}

/** The client of a request forwarded by the gateway, as the gateway saw it (signed with the identity). */
export interface ForwardedClient {
  ip: string;
  /** The Host the client asked for. */
  host: string;
  protocol: 'http' | 'https';
}

/** The one request an internal identity is good for: the service it goes to and the route. */
export interface IdentityTarget {
  /** The receiving service's name (`lead`, `source`, ...): the token's audience `lead-capture:<service>`. */
  service: string;
  method: string;
  /** The request URL; its query string is ignored (as DPoP's `htu`). */
  path: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    identity?: Identity;
    /** Set by kit's internalIdentity plugin from the gateway's signed token; read it through clientOf. */
    forwardedClient?: ForwardedClient;
  }
}

export const INTERNAL_IDENTITY_HEADER = 'x-internal-identity';

const ISSUER_PREFIX = 'lead-capture:';
const AUDIENCE_PREFIX = 'lead-capture:';
/** Short: the token travels one hop, gateway -> service, for one request. */
const LIFETIME_SECONDS = 60;

const METHODS: ReadonlySet<string> = new Set(['jwt', 'api-key', 'service']);
const ROLES: ReadonlySet<string> = new Set(['admin', 'member']);
const SCOPES: ReadonlySet<string> = new Set(['read', 'full']);
const PROTOCOLS: ReadonlySet<string> = new Set(['http', 'https']);

/** The audience of a token for `service`. */
export function identityAudience(service: string): string {
  return `${AUDIENCE_PREFIX}${service}`;
}

function issuerOf(signer: string): string {
  return `${ISSUER_PREFIX}${signer}`;
}

function pathOf(url: string): string {
  return url.split('?', 1)[0] ?? '';
}

/** The identity a service presents when it calls another service's `/internal/` route. */
export function serviceIdentity(callerName: string): Identity {
  return { method: 'service', userId: `service:${callerName}`, role: 'admin', scope: 'full' };
}

/** What one internal token carries: the caller (absent on a public route) and the forwarded client. */
export interface InternalClaims {
  identity?: Identity;
  client?: ForwardedClient;
}

/**
 * Tokens already made, by what they say: the same claims for the same request (a sender posting to
 * its webhook again and again) reuse a token while it has more than half its lifetime left, instead
 * of one Ed25519 signature per request; a receiver then finds it in its own cache (verifiedTokens).
 * A token was good for that request for 60 seconds anyway; reusing it grants nothing more.
 */
class TokenCache<T> {
  readonly #entries = new Map<string, { value: T; until: number }>();

  constructor(readonly limit: number) {}

  get(key: string, now: number): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until > now) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: T, until: number): void {
    // Bounded: the oldest entry leaves first (Map keeps insertion order).
    if (this.#entries.size >= this.limit) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, until });
  }
}

const CACHED_TOKENS = 1000;
const signedTokens = new WeakMap<InternalSigner, TokenCache<string>>();

/** The token cache of `owner` (a signer, a trust) in `caches`, made on first use. */
function cacheOf<K extends object, T>(caches: WeakMap<K, TokenCache<T>>, owner: K): TokenCache<T> {
  let cache = caches.get(owner);
  if (!cache) {
    cache = new TokenCache<T>(CACHED_TOKENS);
    caches.set(owner, cache);
  }
  return cache;
}

/**
 * The signing side: a compact JWS (EdDSA, Ed25519) for one request to one service, valid for 60
 * seconds: `kid` and `iss` name the signer, `aud` lead-capture:<service>, `htm` the method, `htu`
 * the path, the caller (`sub`, method, role, scope) when there is one, the client (`cip`, `chost`,
 * `cproto`) when the gateway forwards a client's request. The signer's key object is made once
 * (internalSigner), and a token for the same claims is reused for half its lifetime (TokenCache).
 */
export async function signInternalToken(
  claims: InternalClaims & { target: IdentityTarget },
  signer: InternalSigner,
): Promise<string> {
  const cache = cacheOf(signedTokens, signer);
  const { identity, client, target } = claims;
  const key = JSON.stringify([
    target.service,
    target.method.toUpperCase(),
    pathOf(target.path),
    identity?.userId,
    identity?.method,
    identity?.role,
    identity?.scope,
    identity?.apiKeyId,
    client?.ip,
    client?.host,
    client?.protocol,
  ]);
  const now = Date.now();
  const cached = cache.get(key, now);
  if (cached !== undefined) return cached;
  const token = await signNewToken(claims, signer);
  cache.set(key, token, now + (LIFETIME_SECONDS * 1000) / 2);
  return token;
}

async function signNewToken(
  claims: InternalClaims & { target: IdentityTarget },
  signer: InternalSigner,
): Promise<string> {
  const { identity, client, target } = claims;
  const payload: Record<string, string> = { htm: target.method.toUpperCase(), htu: pathOf(target.path) };
  if (identity) {
    payload.method = identity.method;
    payload.role = identity.role;
    payload.scope = identity.scope;
    if (identity.apiKeyId !== undefined) payload.apiKeyId = identity.apiKeyId;
  }
  if (client) {
    payload.cip = client.ip;
    payload.chost = client.host;
    payload.cproto = client.protocol;
  }
  const jwt = new SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', kid: signer.name });
  if (identity) jwt.setSubject(identity.userId);
  return jwt
    .setIssuer(issuerOf(signer.name))
    .setAudience(identityAudience(target.service))
    .setIssuedAt()
    .setExpirationTime(`${LIFETIME_SECONDS}s`)
    .sign(signer.key);
}

/** signInternalToken for a caller: the identity for `target` only. */
export function signIdentity(
  identity: Identity,
  signer: InternalSigner,
  target: IdentityTarget,
  client?: ForwardedClient,
): Promise<string> {
  return signInternalToken({ identity, target, ...(client ? { client } : {}) }, signer);
}

function claimsOf(payload: JWTPayload): InternalClaims {
  const claims: InternalClaims = {};
  const { sub, method, role, scope, apiKeyId, cip, chost, cproto } = payload;
  if (sub !== undefined) {
    if (
      typeof sub !== 'string' ||
      typeof method !== 'string' ||
      !METHODS.has(method) ||
      typeof role !== 'string' ||
      !ROLES.has(role) ||
      typeof scope !== 'string' ||
      !SCOPES.has(scope) ||
      (apiKeyId !== undefined && typeof apiKeyId !== 'string')
    ) {
      throw new Error('The token does not carry a valid identity');
    }
    const identity: Identity = {
      method: method as Identity['method'],
      userId: sub,
      role: role as Identity['role'],
      scope: scope as Identity['scope'],
    };
    if (apiKeyId !== undefined) identity.apiKeyId = apiKeyId;
    claims.identity = identity;
  }
  if (cip !== undefined) {
    if (
      typeof cip !== 'string' ||
      typeof chost !== 'string' ||
      typeof cproto !== 'string' ||
      !PROTOCOLS.has(cproto)
    ) {
      throw new Error('The token does not carry a valid client');
    }
    claims.client = { ip: cip, host: chost, protocol: cproto as ForwardedClient['protocol'] };
  }
  return claims;
}

function isOwnServiceIdentity(identity: Identity | undefined, signer: string): boolean {
  const own = serviceIdentity(signer);
  return (
    identity !== undefined &&
    identity.method === own.method &&
    identity.userId === own.userId &&
    identity.role === own.role &&
    identity.scope === own.scope &&
    identity.apiKeyId === undefined
  );
}

/**
 * The receiving side: the claims of a token from signInternalToken, if `trust` believes its signer
 * for them. The gateway's key vouches for users' identities and forwarded clients, never for a
 * service's identity; a service's key vouches only for that service's own identity, without a
 * client, on a call the chain declares from it to `expected.service` (SYNC_CALLS). Rejects (with
 * the reason) any other token: an unknown or untrusted signer, a bad signature, another service
 * (audience) or request (method, path), an expired one, claims that are not an identity.
 */
export async function verifyInternalToken(
  token: string,
  trust: InternalTrust,
  expected: IdentityTarget,
): Promise<InternalClaims> {
  const cache = cacheOf(verifiedTokens, trust);
  const key = `${expected.service}\u0000${expected.method.toUpperCase()}\u0000${pathOf(expected.path)}\u0000${token}`;
  const now = Date.now();
  const cached = cache.get(key, now);
  if (cached) return cached.claims;
  const verified = await verifyNewToken(token, trust, expected);
  // Until it expires: no later than its `exp` (the signer reuses a token for half its lifetime).
  cache.set(key, verified, Math.min(verified.expiresAt, now + LIFETIME_SECONDS * 1000));
  return verified.claims;
}

/** Tokens this process verified, per trust, with their claims, until they expire. */
const verifiedTokens = new WeakMap<
  InternalTrust,
  TokenCache<{ claims: InternalClaims; expiresAt: number }>
>();

async function verifyNewToken(
  token: string,
  trust: InternalTrust,
  expected: IdentityTarget,
): Promise<{ claims: InternalClaims; expiresAt: number }> {
  const { payload, protectedHeader } = await jwtVerify(
    token,
    ({ kid }) => {
      const key = kid === undefined ? undefined : trust.keyOf(kid);
      if (!key) throw new Error(`No trusted key for the signer ${JSON.stringify(kid ?? null)}`);
      return key;
    },
    {
      audience: identityAudience(expected.service),
      algorithms: ['EdDSA'],
      requiredClaims: ['exp', 'iss', 'htm', 'htu'],
      clockTolerance: 5,
    },
  );
  const signer = protectedHeader.kid ?? '';
  if (payload.iss !== issuerOf(signer)) throw new Error('The issuer is not the signer');
  const method = expected.method.toUpperCase();
  const path = pathOf(expected.path);
  if (payload.htm !== method || payload.htu !== path) throw new Error('The token is for another request');
  const claims = claimsOf(payload);
  const expiresAt = (payload.exp ?? 0) * 1000;
  if (signer === GATEWAY_SIGNER) {
    if (claims.identity?.method === 'service')
      throw new Error('The gateway does not sign service identities');
    return { claims, expiresAt };
  }
  if (!isOwnServiceIdentity(claims.identity, signer) || claims.client !== undefined) {
    throw new Error(`The key of ${signer} signs only the ${signer} service's own identity`);
  }
  if (!trust.allowsCall(signer, expected.service, method, path)) {
    throw new Error(
      `${signer} is not declared to call ${method} ${path} on ${expected.service} (SYNC_CALLS in packages/contracts/src/chain.ts)`,
    );
  }
  return { claims, expiresAt };
}

/** verifyInternalToken for a route that needs a caller: rejects a token without an identity. */
export async function verifyIdentity(
  token: string,
  trust: InternalTrust,
  expected: IdentityTarget,
): Promise<Identity> {
  const { identity } = await verifyInternalToken(token, trust, expected);
  if (!identity) throw new Error('The token does not carry an identity');
  return identity;
}

/**
 * The client of a request: as the gateway signed it (distributed mode), else as this process sees it
 * (the socket, or X-Forwarded-* from the proxies TRUST_PROXY names).
 */
export function clientOf(request: FastifyRequest): ForwardedClient {
  return (
    request.forwardedClient ?? {
      ip: request.ip,
      host: request.host,
      protocol: request.protocol,
    }
  );
}
