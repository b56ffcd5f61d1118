import { createSecretKey, type KeyObject } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { jwtVerify, SignJWT } from 'jose';

/**
 * Who is calling, as established by the gateway and carried to services in a signed internal header.
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

const ISSUER = 'lead-capture-gateway';
const AUDIENCE_PREFIX = 'lead-capture:';
/** Short: the token travels one hop, gateway -> service, for one request. */
const LIFETIME_SECONDS = 60;

const METHODS: ReadonlySet<string> = new Set(['jwt', 'api-key', 'service']);
const ROLES: ReadonlySet<string> = new Set(['admin', 'member']);
const SCOPES: ReadonlySet<string> = new Set(['read', 'full']);
const PROTOCOLS: ReadonlySet<string> = new Set(['http', 'https']);

/** Keys by secret (a process has one or two): jose imports raw key bytes anew on every call. */
const keys = new Map<string, KeyObject>();

function keyOf(secret: string): KeyObject {
  if (secret === '') throw new Error('The internal identity secret is empty');
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 8) keys.clear();
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

/** The audience of a token for `service`. */
export function identityAudience(service: string): string {
  return `${AUDIENCE_PREFIX}${service}`;
}

function pathOf(url: string): string {
  return url.split('?', 1)[0] ?? '';
}

/** What one internal token carries: the caller (absent on a public route) and the forwarded client. */
export interface InternalClaims {
  identity?: Identity;
  client?: ForwardedClient;
}

/**
 * The gateway's (and a calling service's) side: a compact JWS (HS256) for one request to one
 * service, valid for 60 seconds: `aud` lead-capture:<service>, `htm` the method, `htu` the path,
 * the caller (`sub`, method, role, scope) when there is one, the client (`cip`, `chost`, `cproto`)
 * when the gateway forwards a client's request.
 */
export async function signInternalToken(
  claims: InternalClaims & { target: IdentityTarget },
  secret: string,
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
  const jwt = new SignJWT(payload).setProtectedHeader({ alg: 'HS256' });
  if (identity) jwt.setSubject(identity.userId);
  return jwt
    .setIssuer(ISSUER)
    .setAudience(identityAudience(target.service))
    .setIssuedAt()
    .setExpirationTime(`${LIFETIME_SECONDS}s`)
    .sign(keyOf(secret));
}

/** signInternalToken for a caller: the identity for `target` only. */
export function signIdentity(
  identity: Identity,
  secret: string,
  target: IdentityTarget,
  client?: ForwardedClient,
): Promise<string> {
  return signInternalToken({ identity, target, ...(client ? { client } : {}) }, secret);
}

/**
 * A service's side: the claims of a token from signInternalToken. Rejects (with the reason) a token
 * with another signature or issuer, one for another service (audience) or another request (method,
 * path), an expired one, or one whose claims are not an identity.
 */
export async function verifyInternalToken(
  token: string,
  secret: string,
  expected: IdentityTarget,
): Promise<InternalClaims> {
  const { payload } = await jwtVerify(token, keyOf(secret), {
    issuer: ISSUER,
    audience: identityAudience(expected.service),
    algorithms: ['HS256'],
    requiredClaims: ['exp', 'htm', 'htu'],
    clockTolerance: 5,
  });
  if (payload.htm !== expected.method.toUpperCase() || payload.htu !== pathOf(expected.path)) {
    throw new Error('The token is for another request');
  }
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

/** verifyInternalToken for a route that needs a caller: rejects a token without an identity. */
export async function verifyIdentity(
  token: string,
  secret: string,
  expected: IdentityTarget,
): Promise<Identity> {
  const { identity } = await verifyInternalToken(token, secret, expected);
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
