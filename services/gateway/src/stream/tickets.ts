import type { DocStore, Document } from '@lead-capture/docstore';
import { unauthorized } from '@lead-capture/kit';
import type { Caller } from '../identity/authenticate.js';
import { hashOfToken, newOpaqueToken, OPAQUE_TOKEN_PATTERN } from '../identity/opaque-tokens.js';
import type { StreamPrincipal, StreamPrincipals } from './principals.js';

/**
 * Stream tickets: what a browser's EventSource, which cannot send an Authorization header, puts in
 * the stream URL instead of the access token. Opaque tokens (see opaque-tokens.ts) stored only as
 * their hashes, in the store every gateway replica shares, so any replica redeems what another
 * issued. Single use (taken out of the store atomically), valid TICKET_TTL_MS, and bound to the
 * principal that asked for it: redeeming checks again that the user is active, their tokens were not
 * revoked and the API key still works.
 */
export const STREAM_TICKETS_COLLECTION = 'gateway_stream_tickets';
export const TICKET_TTL_MS = 30_000;
const TICKET_SHAPE = new RegExp(`^${OPAQUE_TOKEN_PATTERN}$`);
export const INVALID_TICKET = 'Invalid or expired stream ticket';

interface TicketDoc extends Document {
  _id: string;
  principal: StreamPrincipal;
  /** A TTL index removes tickets never redeemed; redeeming checks the time itself. */
  expiresAt: Date;
}

export type IssuedTicket = { ticket: string; expiresAt: string };

export interface StreamTickets {
  ensureIndexes(): Promise<void>;
  issue(principal: StreamPrincipal): Promise<IssuedTicket>;
  /**
   * The ticket's caller as it is now (its identity, and the sign-in it was issued for); 401 for an
   * unknown, used or expired ticket or a revoked principal.
   */
  redeem(ticket: string): Promise<Caller>;
}

type StreamTicketsDeps = { store: DocStore; principals: StreamPrincipals; now?: () => number };

export function createStreamTickets(deps: StreamTicketsDeps): StreamTickets {
  const { principals, now = Date.now } = deps;
  const tickets = deps.store.collection<TicketDoc>(STREAM_TICKETS_COLLECTION);
  return {
    async ensureIndexes() {
      await tickets.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
    },

    async issue(principal) {
      const ticket = newOpaqueToken();
      const expiresAt = new Date(now() + TICKET_TTL_MS);
      await tickets.insertOne({ _id: hashOfToken(ticket), principal, expiresAt });
      return { ticket, expiresAt: expiresAt.toISOString() };
    },

    async redeem(ticket) {
      if (!TICKET_SHAPE.test(ticket)) throw unauthorized(INVALID_TICKET);
      const found = await tickets.findOneAndDelete({ _id: hashOfToken(ticket) });
      if (!found || new Date(found.expiresAt).getTime() <= now()) throw unauthorized(INVALID_TICKET);
      const identity = await principals.identityOf(found.principal);
      if (!identity) throw unauthorized(INVALID_TICKET);
      const { sessionId } = found.principal;
      return { identity, ...(sessionId ? { sessionId } : {}) };
    },
  };
}
