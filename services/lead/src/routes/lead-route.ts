import { errorResponses, requireScope } from '@lead-capture/kit';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  HTTPMethods,
  RouteGenericInterface,
} from 'fastify';
import type { Requester } from '../lead-actions.js';
import type { LeadDoc } from '../store.js';
import { LEAD_CHANGE } from './audit.js';
import { detailOf, type LeadRouteDeps, requesterOf } from './deps.js';
import { LEAD_DETAIL_SCHEMA, LEAD_ID_PARAMS_SCHEMA, type LeadIdParams } from './schemas/lead.js';

/**
 * How the routes of the Leads API are declared: each route module exports what registers its
 * routes (a LeadRoutes), built by one of the factories below, so a route file says only what is
 * its own (URL, schemas, what it reads or changes) and the rest is the same everywhere: reads take
 * any scope, a change to a lead takes full scope and says why it is not audited (LEAD_CHANGE), a
 * route on one lead answers 404 "Lead not found" for an id that names none.
 */
export type LeadRoutes = (app: FastifyInstance, deps: LeadRouteDeps) => void;

/** The routes of each of `parts`, in order. */
export function leadRoutes(...parts: LeadRoutes[]): LeadRoutes {
  return (app, deps) => {
    for (const register of parts) register(app, deps);
  };
}

/** A request whose params, query and body the route's schemas have checked. */
export type CheckedRequest<Route extends RouteGenericInterface> = FastifyRequest & {
  params: Route['Params'];
  query: Route['Querystring'];
  body: Route['Body'];
};

export type LeadRouteHandler<Route extends RouteGenericInterface> = (
  request: CheckedRequest<Route>,
  reply: FastifyReply,
  deps: LeadRouteDeps,
) => Promise<unknown>;

export interface LeadRouteSpec<Route extends RouteGenericInterface> {
  method: HTTPMethods;
  url: string;
  /** A change to one lead: full scope, and not audited (the lead's timeline records it, LEAD_CHANGE). */
  changesLead?: boolean;
  /** Its params, querystring and body schemas, and `response`: the answers by status. */
  schema: FastifySchema;
  handler: LeadRouteHandler<Route>;
}

/** Any route of the Leads API. */
export function leadRoute<Route extends RouteGenericInterface>(spec: LeadRouteSpec<Route>): LeadRoutes {
  const { method, url, changesLead = false, schema, handler } = spec;
  const write = changesLead ? { config: { audit: LEAD_CHANGE }, onRequest: requireScope('full') } : {};
  return (app, deps) => {
    app.route({
      method,
      url,
      schema,
      ...write,
      handler: (request, reply) => handler(request as CheckedRequest<Route>, reply, deps),
    });
  };
}

/**
 * GET `url`: 200 with what `read` answers, with any scope. `response` has the answers by status;
 * `params` and `querystring` check the request.
 */
export function readRoute<Route extends RouteGenericInterface>(spec: {
  url: string;
  params?: FastifySchema['params'];
  querystring?: FastifySchema['querystring'];
  response: FastifySchema['response'];
  read: (request: CheckedRequest<Route>, deps: LeadRouteDeps) => Promise<unknown>;
}): LeadRoutes {
  const { url, read, ...schema } = spec;
  return leadRoute<Route>({
    method: 'GET',
    url,
    schema,
    handler: (request, _reply, deps) => read(request, deps),
  });
}

/**
 * GET `url` of one lead (`:id`): 404 "Lead not found" when no lead has that id, else 200 with what
 * `read` makes of the lead. Errors: 400 (a query the `querystring` schema refuses), 401, 404, 429.
 */
export function leadRead<Query = unknown>(spec: {
  url: string;
  querystring?: FastifySchema['querystring'];
  answer: object;
  read: (lead: LeadDoc, deps: LeadRouteDeps, query: Query) => Promise<unknown>;
}): LeadRoutes {
  const { url, querystring, answer, read } = spec;
  return readRoute<{ Params: LeadIdParams; Querystring: Query }>({
    url,
    params: LEAD_ID_PARAMS_SCHEMA,
    ...(querystring
      ? { querystring, response: { 200: answer, ...errorResponses(400, 401, 404, 429) } }
      : { response: { 200: answer, ...errorResponses(401, 404, 429) } }),
    read: async (request, deps) =>
      read(await deps.actions.requireLead(request.params.id), deps, request.query),
  });
}

/**
 * `method` `url` {body}: a change to one lead (`:id`), answered 200 with the lead's detail as
 * `change` left it. Errors: `errors`, by default 400, 401, 403, 404, 429.
 */
export function leadDetailChange<Body>(spec: {
  method: 'POST' | 'PUT';
  url: string;
  body: FastifySchema['body'];
  errors?: number[];
  change: (deps: LeadRouteDeps, id: string, body: Body, requester: Requester) => Promise<LeadDoc>;
}): LeadRoutes {
  const { method, url, body, errors = [400, 401, 403, 404, 429], change } = spec;
  return leadRoute<{ Params: LeadIdParams; Body: Body }>({
    method,
    url,
    changesLead: true,
    schema: {
      params: LEAD_ID_PARAMS_SCHEMA,
      body,
      response: { 200: LEAD_DETAIL_SCHEMA, ...errorResponses(...errors) },
    },
    handler: async (request, _reply, deps) =>
      detailOf(deps.context, await change(deps, request.params.id, request.body, requesterOf(request))),
  });
}

/**
 * DELETE `url`: removes one lead or something of it (`params` name which), 204 with no body. Errors:
 * 401, 403, 404, 429.
 */
export function leadRemoval<Params extends RouteGenericInterface['Params']>(spec: {
  url: string;
  params: FastifySchema['params'];
  remove: (deps: LeadRouteDeps, params: Params, requester: Requester) => Promise<unknown>;
}): LeadRoutes {
  const { url, params, remove } = spec;
  return leadRoute<{ Params: Params }>({
    method: 'DELETE',
    url,
    changesLead: true,
    schema: { params, response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404, 429) } },
    handler: async (request, reply, deps) => {
      await remove(deps, request.params, requesterOf(request));
      return reply.code(204).send();
    },
  });
}
