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

declare module 'fastify' {
  interface FastifyRequest {
    identity?: Identity;
  }
}

export const INTERNAL_IDENTITY_HEADER = 'x-internal-identity';

const ISSUER = 'lead-capture-gateway';
const AUDIENCE = 'lead-capture-services';
/** Short: the token travels one hop, gateway -> service, for one request. */
const LIFETIME_SECONDS = 60;

const METHODS: ReadonlySet<string> = new Set(['jwt', 'api-key', 'service']);
const ROLES: ReadonlySet<string> = new Set(['admin', 'member']);
const SCOPES: ReadonlySet<string> = new Set(['read', 'full']);

function keyOf(secret: string): Uint8Array {
  if (secret === '') throw new Error('The internal identity secret is empty');
  return new TextEncoder().encode(secret);
}

/** The gateway's side: a compact JWS (HS256) carrying the caller, valid for 60 seconds. */
export async function signIdentity(identity: Identity, secret: string): Promise<string> {
  const { method, role, scope, apiKeyId } = identity;
  return new SignJWT({ method, role, scope, ...(apiKeyId === undefined ? {} : { apiKeyId }) })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(identity.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${LIFETIME_SECONDS}s`)
    .sign(keyOf(secret));
}

/**
 * A service's side: the identity in a token from signIdentity. Rejects (with the reason) a token
 * with another signature, issuer or audience, an expired one, or one whose claims are not an identity.
 */
export async function verifyIdentity(token: string, secret: string): Promise<Identity> {
  const { payload } = await jwtVerify(token, keyOf(secret), {
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ['HS256'],
    requiredClaims: ['sub', 'exp'],
    clockTolerance: 5,
  });
  const { sub, method, role, scope, apiKeyId } = payload;
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
  return identity;
}
