import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope, JsonObject, LeadCaptured, LeadSnapshot } from '@lead-capture/contracts';
import { bareLeadSnapshot, SAMPLE_IDS } from '@lead-capture/contracts/samples';
import type { DocStore } from '@lead-capture/docstore';
import type { Identity, InternalClient, InternalRequest, InternalResponse } from '@lead-capture/kit';
import {
  type Reply,
  startServiceHarness,
  type TestBus,
  testLogger,
  trackedTestBus,
} from '@lead-capture/kit/testing';
import { type HandledLog, waitFor } from '@lead-capture/testing';
import { createWebhooksService, loadWebhooksConfig, type WebhooksServiceOptions } from '../src/index.js';

export { type Reply, waitFor } from '@lead-capture/kit/testing';

export const logger = testLogger('webhooks');

/** One request the receiver got. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How the receiver answers a request: status, headers, body; or `hold` to never answer. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hold';

/** A promise the test settles when it wants a held answer to go out. */
export interface Gate {
  promise: Promise<void>;
  open: () => void;
}

export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A real HTTP server on 127.0.0.1 that records every request and answers as `respond` says. */
export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** An answer, or a promise of one (answered when it resolves). */
  respond: (request: Received, index: number) => Answer | Promise<Answer>;
  close(): Promise<void>;
}

export async function startReceiver(
  respond: Receiver['respond'] = () => ({ status: 200 }),
): Promise<Receiver> {
  const held: ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    respond,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of held) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: Received = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      receiver.received.push(received);
      void Promise.resolve(receiver.respond(received, receiver.received.length - 1)).then((answer) => {
        if (answer === 'hold') {
          held.push(response);
          return;
        }
        if (response.destroyed) return;
        response.writeHead(answer.status, answer.headers ?? {});
        response.end(answer.body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  return receiver;
}

/**
 * The lead service as the webhooks worker reaches it through its internal client: `GET
 * /internal/lead/leads/<id>` answered from the details a test puts here, as the real route answers
 * (its own tests and the embedded runtime's check the real one): 404 `Lead not found` for a lead it
 * does not have, 409 while `scoredSince` is later than the score shown. `reachable = false` makes
 * every call fail as a refused connection does.
 */
export class LeadServiceStandIn implements InternalClient {
  readonly leads = new Map<string, JsonObject>();
  /** occurredAt of the score each lead shows. */
  readonly scoredAt = new Map<string, string>();
  reachable = true;
  calls = 0;
  /** The lead id of every read, in the order they were asked (before a hold). */
  readonly reads: string[] = [];
  private readonly held = new Map<string, Promise<void>>();

  /** Calls for `leadId` wait (as a slow lead service) until the returned release is called. */
  hold(leadId: string): () => void {
    let release!: () => void;
    this.held.set(leadId, new Promise<void>((resolve) => (release = resolve)));
    return () => {
      this.held.delete(leadId);
      release();
    };
  }

  /** Holds the lead as the detail endpoint shows a new lead of `captured`, and returns it. */
  capture(captured: LeadCaptured): JsonObject {
    const detail = leadDetailOf(captured);
    this.leads.set(captured.leadId, detail);
    return detail;
  }

  /** Changes the lead it holds (as the lead service applies an event), and returns it. */
  change(leadId: string, changes: JsonObject, scoredAt?: string): JsonObject {
    const lead = this.leads.get(leadId);
    if (!lead) throw new Error(`The stand-in has no lead ${leadId}`);
    const changed = { ...lead, ...changes, updatedAt: new Date().toISOString() };
    this.leads.set(leadId, changed);
    if (scoredAt) this.scoredAt.set(leadId, scoredAt);
    return changed;
  }

  async request(service: string, { method, path }: InternalRequest): Promise<InternalResponse> {
    this.calls++;
    if (!this.reachable) throw new TypeError('fetch failed: connect ECONNREFUSED 127.0.0.1:3101');
    const url = new URL(path, 'http://lead.internal');
    const match = /^\/internal\/lead\/leads\/([^/]+)$/.exec(url.pathname);
    if (service !== 'lead' || method !== 'GET' || !match) {
      return { status: 404, body: { error: `Not found: ${method} ${url.pathname}` } };
    }
    const leadId = decodeURIComponent(match[1]!);
    this.reads.push(leadId);
    await this.held.get(leadId);
    const lead = this.leads.get(leadId);
    if (!lead) return { status: 404, body: { error: 'Lead not found' } };
    const scoredSince = url.searchParams.get('scoredSince');
    const scoredAt = this.scoredAt.get(leadId);
    if (scoredSince && (!scoredAt || Date.parse(scoredAt) < Date.parse(scoredSince))) {
      return { status: 409, body: { error: 'The lead does not show this score yet' } };
    }
    return { status: 200, body: structuredClone(lead) };
  }
}

/** A new lead of `captured` in the detail endpoint's shape (every field of the lead service's schema). */
export function leadDetailOf({ leadId, lead, isDuplicate, duplicateOf }: LeadCaptured): JsonObject {
  return {
    id: leadId,
    firstName: lead.firstName,
    lastName: lead.lastName,
    email: lead.email,
    phone: lead.phone,
    company: lead.company,
    status: lead.status,
    score: 0,
    qualification: null,
    source: { id: lead.sourceId, name: lead.sourceName, deleted: false },
    assignedTo: null,
    isDuplicate,
    duplicateOf,
    createdAt: lead.createdAt,
    phoneOriginal: lead.phone,
    notes: null,
    tags: lead.tags.map((name) => ({ id: randomUUID(), name })),
    customFields: lead.custom,
    attribution: { utm: lead.attribution.utm ?? {}, referrer: lead.attribution.referrer ?? null },
    client: { ip: lead.client.ip ?? null, userAgent: lead.client.userAgent ?? null },
    enrichment: null,
    scoreReasons: [],
    pipeline: null,
    stage: null,
    notifications: [],
    enrollments: [],
    updatedAt: lead.createdAt,
  } as JsonObject;
}

export interface WebhooksHarness {
  bus: MessageBus;
  /** The lead service the worker reads leads from. */
  leads: LeadServiceStandIn;
  store: DocStore;
  handled: HandledLog;
  clock: { now: Date };
  /** Completed delivery passes so far. */
  passes: () => number;
  /** Waits until `count` more passes have completed (each after the clock moved: nothing more was due). */
  nextPasses(count?: number): Promise<void>;
  /**
   * A new lead: held by the lead service stand-in, then its lead.captured published and settled.
   * Returns the event's data and envelope.
   */
  capture(
    overrides?: Partial<LeadSnapshot>,
  ): Promise<{ captured: LeadCaptured; event: EventEnvelope; detail: JsonObject }>;
  /** As an admin (user `userId`) with full scope unless `identity` says otherwise. */
  call(method: string, url: string, body?: unknown, identity?: Partial<Identity> | null): Promise<Reply>;
  /** The user of the default identity: an admin. */
  userId: string;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  store?: DocStore;
  /** A bus to use instead of the in-process one on the harness's store (closed by close()). */
  bus?: TestBus;
  service?: WebhooksServiceOptions;
  leads?: LeadServiceStandIn;
}

/**
 * The webhooks service as its own process mounts it (kit's HTTP app with the internal-identity check),
 * on a fresh embedded store and an in-process bus; http and private targets allowed unless `env`
 * says otherwise (the receiver is on 127.0.0.1); jitter fixed at its middle (random 0.5).
 */
export async function startWebhooksHarness(
  options: HarnessOptions & { startAt?: Date } = {},
): Promise<WebhooksHarness> {
  // Starts at the real time: receivers' verifiers check the timestamp against their own clock.
  const clock = { now: options.startAt ?? new Date(Math.floor(Date.now() / 1000) * 1000) };
  const config = loadWebhooksConfig({
    OUTBOUND_WEBHOOK_ALLOW_HTTP: 'true',
    OUTBOUND_WEBHOOK_ALLOW_PRIVATE: 'true',
    OUTBOUND_WEBHOOK_TICK_MS: '50',
    OUTBOUND_WEBHOOK_TIMEOUT_MS: '2000',
    ...options.env,
  });
  let passes = 0;
  const leads = options.leads ?? new LeadServiceStandIn();
  const tracked = trackedTestBus(logger, options.bus);
  const h = await startServiceHarness(
    (deps) =>
      createWebhooksService(deps, config, {
        random: () => 0.5,
        onDispatchPass: () => {
          passes++;
        },
        // An event retried because the lead service could not answer comes back at once.
        eventRetryDelayMs: () => 20,
        ...options.service,
      }),
    {
      label: 'webhooks',
      now: () => clock.now,
      logger,
      bus: tracked.make,
      closeBus: true,
      ...(options.store ? { store: options.store } : {}),
      internal: leads,
      identity: { role: 'admin' },
    },
  );
  const harness: WebhooksHarness = {
    bus: h.bus,
    leads,
    store: h.store,
    handled: tracked.handled,
    clock,
    passes: () => passes,
    async nextPasses(count = 2) {
      const target = passes + count;
      await waitFor(`${count} delivery passes`, () => passes >= target);
    },
    async capture(overrides = {}) {
      const captured = capturedEvent(overrides);
      const detail = leads.capture(captured);
      const event = await publishAndSettle(harness, 'lead.captured', captured);
      return { captured, event, detail };
    },
    call: h.call,
    userId: h.userId,
    close: h.close,
  };
  return harness;
}

/** Ada Lovelace, captured from the contracts' sample source. */
export function capturedEvent(
  overrides: Partial<LeadSnapshot> = {},
  leadId: string = randomUUID(),
): LeadCaptured {
  return {
    leadId,
    submissionId: randomUUID(),
    sourceId: SAMPLE_IDS.source,
    isDuplicate: false,
    duplicateOf: null,
    lead: bareLeadSnapshot({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@analytical.example',
      company: 'Analytical Engines',
      ...overrides,
    }),
  };
}

/** Publishes an event and waits until the service's handler has acknowledged it. */
export async function publishAndSettle(
  h: WebhooksHarness,
  type: Parameters<MessageBus['publish']>[0],
  data: unknown,
): Promise<EventEnvelope> {
  const event = await h.bus.publish(type, data as never);
  await h.handled.settled(type, [event]);
  return event;
}

export const SOURCE_ID = SAMPLE_IDS.source;
