import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import type { EventDataMap, EventEnvelope, EventType } from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import type { DocStore } from '@lead-capture/docstore';
import type { Identity, ServiceModule } from '@lead-capture/kit';
import { startServiceHarness, type TestBus, testLogger, trackedTestBus } from '@lead-capture/kit/testing';
import { type HandledLog, waitFor } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { type LeadConfig, loadLeadConfig } from '../src/config.js';
import { createLeadService } from '../src/service.js';

export const SECRET = 'lead-service-test-secret-of-at-least-32-bytes';
export const ADMIN_ID = '11111111-1111-4111-8111-111111111111';
export const logger = testLogger('lead');

/** Events the service publishes, as a consumer downstream receives them. */
export const PUBLISHED_TYPES = ['lead.captured', 'lead.updated', 'lead.deleted', 'lead.merged'] as const;

export interface Harness {
  app: FastifyInstance;
  store: DocStore;
  bus: MessageBus;
  module: ServiceModule;
  /** What the service published, in order. */
  published: EventEnvelope[];
  /** The consumer group that records what was published. */
  recorderGroup: string;
  /** Which events the service's consumers finished on. */
  handled: HandledLog;
  /**
   * Waits until the lead outbox is empty and a marker published after it reached the recorder: all
   * the service published before has then been recorded in `published` (the marker is removed).
   */
  drained(): Promise<void>;
  /** Headers of an authenticated request, signed for that request (full scope unless told). */
  auth(request: { method: string; url: string }, scope?: Identity['scope']): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/**
 * The lead service as its own process runs it (kit's buildServiceApp: internal identity, routes,
 * consumers), over a fresh embedded store and, unless given, an in-process bus.
 */
export async function startHarness(
  options: {
    config?: Partial<LeadConfig>;
    /** Default: the in-process bus on the harness's store (see kit's TestBus). */
    bus?: TestBus;
    store?: DocStore;
    relayIntervalMs?: number;
  } = {},
): Promise<Harness> {
  const recorderGroup = `test.lead.recorder.${randomUUID().slice(0, 8)}`;
  const config: LeadConfig = { ...loadLeadConfig({}), ...options.config };
  const tracked = trackedTestBus(logger, options.bus);
  const h = await startServiceHarness(
    (deps) => createLeadService(deps, config, { relayIntervalMs: options.relayIntervalMs }),
    {
      label: 'lead',
      logger,
      secret: SECRET,
      app: 'service',
      bus: tracked.make,
      closeBus: typeof options.bus !== 'object',
      store: options.store,
      observe: { group: recorderGroup, types: [...PUBLISHED_TYPES] },
      identity: { userId: ADMIN_ID, role: 'admin' },
    },
  );
  return {
    app: h.app,
    store: h.store,
    bus: h.bus,
    module: h.module,
    published: h.events,
    recorderGroup,
    handled: tracked.handled,
    async drained() {
      await waitFor(
        'the lead outbox emptied',
        async () => (await h.store.collection('lead_outbox').countDocuments({})) === 0,
      );
      const marker = await h.bus.publish('lead.updated', {
        leadId: randomUUID(),
        changes: { notes: 'marker' },
      });
      await waitFor('the marker recorded', () => h.events.some((event) => event.id === marker.id));
      h.events.splice(
        h.events.findIndex((event) => event.id === marker.id),
        1,
      );
    },
    auth: (request, scope = 'full') => h.headers(request, { scope }),
    close: h.close,
  };
}

export { waitFor };

export type Fields = EventDataMap['lead.received']['fields'];

/** A lead.received payload as the intake would publish it, with fresh ids. */
export function submission(
  fields: Fields,
  overrides: Partial<EventDataMap['lead.received']> = {},
): EventDataMap['lead.received'] {
  return { ...SAMPLE_EVENT_DATA['lead.received'], submissionId: randomUUID(), fields, ...overrides };
}

export async function publish<T extends EventType>(
  bus: MessageBus,
  type: T,
  data: EventDataMap[T],
  id?: string,
): Promise<EventEnvelope> {
  return bus.publish(type, data, id ? { id } : {});
}

export interface ApiLead {
  id: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  phone: string | null;
  company: string | null;
  status: string;
  score: number;
  source: { id: string; name: string; deleted: boolean };
  assignedTo: string | null;
  isDuplicate: boolean;
  duplicateOf: string | null;
  createdAt: string;
  pipeline: { id: string; name: string } | null;
  stage: { id: string; name: string } | null;
  [field: string]: unknown;
}

/** Captures a lead through the bus, as the intake's submission would, and returns it from the API. */
export async function captureLead(
  harness: Harness,
  fields: Fields,
  overrides: Partial<EventDataMap['lead.received']> = {},
): Promise<ApiLead> {
  const data = submission(fields, overrides);
  await publish(harness.bus, 'lead.received', data);
  const captured = await waitFor(`lead.captured for ${data.submissionId}`, () =>
    harness.published.find(
      (event) =>
        event.type === 'lead.captured' &&
        (event.data as { submissionId: string }).submissionId === data.submissionId,
    ),
  );
  return getLead(harness, (captured.data as { leadId: string }).leadId);
}

export async function getLead(harness: Harness, id: string): Promise<ApiLead> {
  const response = await harness.app.inject({
    method: 'GET',
    url: `/api/leads/${id}`,
    headers: await harness.auth({ method: 'GET', url: `/api/leads/${id}` }),
  });
  if (response.statusCode !== 200) throw new Error(`GET lead ${id}: ${response.statusCode} ${response.body}`);
  return response.json();
}

export interface ApiResponse {
  status: number;
  body: unknown;
  headers: Record<string, unknown>;
  text: string;
}

/** HTTP calls through app.inject, authenticated with full scope unless told otherwise. */
export function client(harness: Harness) {
  async function call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    options: {
      body?: unknown;
      scope?: Identity['scope'] | 'none';
      headers?: Record<string, string>;
      payload?: string | Buffer;
    } = {},
  ): Promise<ApiResponse> {
    const auth = options.scope === 'none' ? {} : await harness.auth({ method, url }, options.scope ?? 'full');
    const response = await harness.app.inject({
      method,
      url,
      headers: { ...auth, ...options.headers },
      ...(options.body !== undefined ? { payload: options.body as object } : {}),
      ...(options.payload !== undefined ? { payload: options.payload } : {}),
    });
    const text = response.body;
    let body: unknown = text;
    if (String(response.headers['content-type'] ?? '').includes('application/json')) body = JSON.parse(text);
    return { status: response.statusCode, body, headers: response.headers, text };
  }
  return {
    get: (url: string, options?: Parameters<typeof call>[2]) => call('GET', url, options),
    put: (url: string, body: unknown, options?: Parameters<typeof call>[2]) =>
      call('PUT', url, { ...options, body }),
    post: (url: string, body: unknown, options?: Parameters<typeof call>[2]) =>
      call('POST', url, { ...options, body }),
    delete: (url: string, options?: Parameters<typeof call>[2]) => call('DELETE', url, options),
  };
}
