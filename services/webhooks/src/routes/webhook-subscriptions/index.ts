import {
  auditCreate,
  auditRecord,
  notAudited,
  pagedAnswer,
  type RouteAudit,
  requireRole,
  requireScope,
} from '@lead-capture/kit';
import type { FastifyPluginAsync, FastifySchema } from 'fastify';
import {
  CREATE_BODY,
  CREATED_SUBSCRIPTION,
  DELIVERY,
  DELIVERY_LIST,
  DELIVERY_PARAMS,
  DELIVERY_QUERY,
  type DeliveryParams,
  type DeliveryQuery,
  errorResponses,
  ID_PARAMS,
  type IdParams,
  PATCH_BODY,
  RESUME_BODY,
  type ResumeBody,
  ROTATED_SECRET,
  SUBSCRIPTION,
  SUBSCRIPTION_LIST,
  type SubscriptionInput,
  type SubscriptionPatch,
  TAGS,
} from '../../schemas.js';
import type { AttemptDocument, DeliveryDocument, SubscriptionDocument } from '../../store.js';
import type { SubscriptionCatalog } from '../../subscriptions.js';

export interface SubscriptionRoutesOptions {
  catalog: SubscriptionCatalog;
  now: () => Date;
}

/** A subscription as the API shows it: never a secret (those are shown once, when made). */
function subscriptionView(subscription: SubscriptionDocument, now: Date) {
  const overlapping = subscription.secrets.find(
    ({ expiresAt }) => expiresAt !== null && Date.parse(expiresAt) > now.getTime(),
  );
  return {
    id: subscription._id,
    url: subscription.url,
    description: subscription.description,
    eventTypes: subscription.eventTypes,
    filters: subscription.filters,
    active: subscription.active,
    status: !subscription.active ? 'disabled' : subscription.pausedReason ? 'paused' : 'active',
    pausedReason: subscription.pausedReason ?? null,
    pausedAt: subscription.pausedAt ?? null,
    createdBy: subscription.createdBy,
    ownerId: subscription.ownerId ?? subscription.createdBy,
    disabledReason: subscription.disabledReason,
    disabledAt: subscription.disabledAt,
    failingSince: subscription.failingSince,
    alertEmails: subscription.alertEmails,
    previousSecretExpiresAt: overlapping?.expiresAt ?? null,
    createdAt: subscription.createdAt,
    updatedAt: subscription.updatedAt,
  };
}

function deliveryView({ delivery, attempts }: { delivery: DeliveryDocument; attempts: AttemptDocument[] }) {
  return {
    id: delivery._id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.status === 'pending' ? (delivery.nextAttemptAt?.toISOString() ?? null) : null,
    lastAttemptAt: delivery.lastAttemptAt,
    lastStatusCode: delivery.lastStatusCode,
    lastError: delivery.lastError,
    createdAt: delivery.createdAt,
    payload: JSON.parse(delivery.body) as Record<string, unknown>,
    attemptLog: attempts.map((attempt) => ({
      number: attempt.number,
      attemptedAt: attempt.attemptedAt.toISOString(),
      url: attempt.url,
      requestHeaders: attempt.requestHeaders,
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
      responseExcerpt: attempt.responseExcerpt,
      error: attempt.error,
    })),
  };
}

/**
 * Outbound webhooks send lead data out of the workspace: the audit log keeps who points it where.
 * Never the secret.
 */
const AUDITED_FIELDS = ['url', 'eventTypes', 'filters', 'active'];

/**
 * /api/webhook-subscriptions: reads need any identity (members and read-only keys included: never a
 * secret); every change is an admin's, with full scope: a subscription sends lead data out of the
 * workspace.
 */
export const subscriptionRoutes: FastifyPluginAsync<SubscriptionRoutesOptions> = async (
  app,
  { catalog, now },
) => {
  const read = requireScope('read');
  const write = [requireScope('full'), requireRole('admin')];
  /** The options of a read of the subscription `:id`. */
  const readOf = (schema: Omit<FastifySchema, 'tags' | 'params'>) => ({
    onRequest: read,
    schema: { tags: TAGS, params: ID_PARAMS, ...schema },
  });
  /** The options of an admin's write, with its audit (or why it has none). */
  const adminWrite = (audit: RouteAudit, schema: Omit<FastifySchema, 'tags'>) => ({
    config: { audit },
    onRequest: write,
    schema: { tags: TAGS, ...schema },
  });
  /** The options of an admin's write to the subscription `:id`. */
  const writeTo = (audit: RouteAudit, schema: Omit<FastifySchema, 'tags' | 'params'>) =>
    adminWrite(audit, { params: ID_PARAMS, ...schema });

  app.get(
    '/api/webhook-subscriptions',
    {
      onRequest: read,
      schema: {
        tags: TAGS,
        summary: 'Every webhook subscription, oldest first',
        response: { 200: SUBSCRIPTION_LIST, ...errorResponses(401) },
      },
    },
    async () => (await catalog.list()).map((subscription) => subscriptionView(subscription, now())),
  );

  app.post<{ Body: SubscriptionInput }>(
    '/api/webhook-subscriptions',
    adminWrite(auditCreate('webhook_subscription.create', { id: 'subscriptionId', fields: AUDITED_FIELDS }), {
      summary: 'Subscribe a URL to lead events (admins); the answer shows the signing secret once',
      body: CREATE_BODY,
      response: { 201: CREATED_SUBSCRIPTION, ...errorResponses(400, 401, 403) },
    }),
    async (request, reply) => {
      const identity = request.identity!;
      const subscription = await catalog.create(request.body, {
        userId: identity.userId,
        apiKeyId: identity.apiKeyId ?? null,
      });
      const secret = subscription.secrets[0]!.secret;
      return reply.code(201).send({ ...subscriptionView(subscription, now()), secret });
    },
  );

  app.get<{ Params: IdParams }>(
    '/api/webhook-subscriptions/:id',
    readOf({
      summary: 'One webhook subscription',
      response: { 200: SUBSCRIPTION, ...errorResponses(401, 404) },
    }),
    async (request) => subscriptionView(await catalog.require(request.params.id), now()),
  );

  app.patch<{ Params: IdParams; Body: SubscriptionPatch }>(
    '/api/webhook-subscriptions/:id',
    writeTo(
      auditRecord('webhook_subscription.update', { id: 'subscriptionId', responseFields: AUDITED_FIELDS }),
      {
        summary: 'Change a subscription (admins); {"active": true} enables one the worker disabled',
        body: PATCH_BODY,
        response: { 200: SUBSCRIPTION, ...errorResponses(400, 401, 403, 404) },
      },
    ),
    async (request) => subscriptionView(await catalog.update(request.params.id, request.body), now()),
  );

  app.delete<{ Params: IdParams }>(
    '/api/webhook-subscriptions/:id',
    writeTo(auditRecord('webhook_subscription.delete', { id: 'subscriptionId' }), {
      summary: 'Delete a subscription with its delivery log (admins)',
      response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404) },
    }),
    async (request, reply) => {
      await catalog.remove(request.params.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: IdParams; Body: ResumeBody }>(
    '/api/webhook-subscriptions/:id/resume',
    {
      ...writeTo(
        auditRecord('webhook_subscription.resume', { id: 'subscriptionId', requestFields: ['deliverHeld'] }),
        {
          summary:
            'Resume a paused subscription (admins): it then stands for you, and the events held meanwhile are sent (or cancelled)',
          body: RESUME_BODY,
          response: { 200: SUBSCRIPTION, ...errorResponses(400, 401, 403, 404, 409) },
        },
      ),
      // The body is optional: none sends what was held.
      preValidation: async (request) => {
        request.body ??= { deliverHeld: true };
      },
    },
    async (request) => {
      const resumed = await catalog.resume(
        request.params.id,
        request.identity!.userId,
        request.body.deliverHeld ?? true,
      );
      return subscriptionView(resumed, now());
    },
  );

  app.post<{ Params: IdParams }>(
    '/api/webhook-subscriptions/:id/rotate-secret',
    writeTo(auditRecord('webhook_subscription.rotate_secret', { id: 'subscriptionId' }), {
      summary:
        'A new signing secret (admins), shown once; the previous one keeps signing for the overlap window',
      response: { 200: ROTATED_SECRET, ...errorResponses(401, 403, 404) },
    }),
    async (request) => catalog.rotateSecret(request.params.id),
  );

  app.post<{ Params: IdParams }>(
    '/api/webhook-subscriptions/:id/test',
    writeTo(notAudited('Sends one test event to the receiver; the delivery log records it'), {
      summary: 'Send a webhook.test message now (admins) and answer how the attempt went',
      response: { 200: DELIVERY, ...errorResponses(401, 403, 404) },
    }),
    async (request) => deliveryView(await catalog.sendTest(request.params.id)),
  );

  app.get<{ Params: IdParams; Querystring: DeliveryQuery }>(
    '/api/webhook-subscriptions/:id/deliveries',
    readOf({
      summary: 'The delivery log of a subscription, newest first, each with its attempts',
      querystring: DELIVERY_QUERY,
      response: { 200: DELIVERY_LIST, ...errorResponses(400, 401, 404) },
    }),
    async (request) => {
      const { deliveries, total } = await catalog.listDeliveries(request.params.id, request.query);
      return pagedAnswer(deliveries, total, request.query, deliveryView);
    },
  );

  app.post<{ Params: DeliveryParams }>(
    '/api/webhook-subscriptions/:id/deliveries/:deliveryId/redeliver',
    adminWrite(notAudited('Sends a recorded delivery again; the delivery log records it'), {
      summary:
        'Send a delivery again (admins; same webhook-id, same body), with a new retry window; 409 while paused',
      params: DELIVERY_PARAMS,
      response: { 202: DELIVERY, ...errorResponses(401, 403, 404, 409) },
    }),
    async (request, reply) =>
      reply
        .code(202)
        .send(deliveryView(await catalog.redeliver(request.params.id, request.params.deliveryId))),
  );
};
