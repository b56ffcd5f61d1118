/**
 * Who is calling, as established by the gateway and carried to services in a signed internal header.
 * Routes read it from `request.identity`; it is absent only on unauthenticated routes (the webhook).
 */
export interface Identity {
  /** How the caller authenticated. */
  method: 'jwt' | 'api-key';
  /** The user behind the call: the logged-in user, or the user who created the API key. */
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
