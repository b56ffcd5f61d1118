import { type Identity, unauthorized } from '@lead-capture/kit';
import type { FastifyRequest } from 'fastify';
import type { LeadContext } from '../context.js';
import type { ImportTracker } from '../imports.js';
import type { LeadActions, Requester } from '../lead-actions.js';
import type { LeadDoc } from '../store.js';
import { type LeadDetail, loadViewContext, toDetail } from '../views.js';

/** What every route module of the Leads API is given. */
export interface LeadRouteDeps {
  context: LeadContext;
  actions: LeadActions;
  imports: ImportTracker;
}

export function requesterOf(request: FastifyRequest): Requester {
  const identity: Identity | undefined = request.identity;
  if (!identity) throw unauthorized('Authentication required');
  return { identity, requestId: request.id };
}

/** The full detail of a lead, with the current names of its source, pipeline, stage and tags. */
export async function detailOf(context: LeadContext, lead: LeadDoc): Promise<LeadDetail> {
  return toDetail(lead, await loadViewContext(context.collections, [lead]));
}
