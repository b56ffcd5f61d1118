import { randomUUID } from 'node:crypto';
import type { MessageBus } from '@lead-capture/bus';
import type { EventEnvelope, LeadEnrolled, LeadNotified, LeadScored } from '@lead-capture/contracts';
import {
  createHttpApp,
  INTERNAL_IDENTITY_HEADER,
  internalIdentity,
  type ServiceModule,
  signIdentity,
} from '@lead-capture/kit';
import {
  inProcessTestBus,
  openTestRabbitBus,
  openTestStore,
  TEST_INTERNAL_KEYS,
  testSigner,
} from '@lead-capture/kit/testing';
import { type SmtpSink, startSmtpSink } from '@lead-capture/mailer/testing';
import { createNotificationService, loadNotificationConfig } from '@lead-capture/notification';
import { AMQP_URL, requireService } from '@lead-capture/testing';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createSequenceService, loadSequenceConfig } from '../src/index.js';
import { leadSnapshot, logger, noInternalCalls, OBSERVED, waitFor } from './harness.js';

const rabbit = await requireService('RabbitMQ', AMQP_URL);

const OBSERVER_GROUP = 'test.chain.observe';
const BASE_URL = 'https://crm.example.com';
const HOUR_MS = 3_600_000;

/** Notification and sequence workers on one store and one bus, behind one app: the embedded runtime's shape. */
interface Chain {
  app: FastifyInstance;
  bus: MessageBus;
  events: EventEnvelope[];
  clock: { now: Date };
  /** Waits until the sequence scheduler has ended two passes from now (one began after the call). */
  schedulerPassed(): Promise<void>;
  call(method: string, url: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

/** The chain on a fresh store, over `given` (the caller's to close) or the in-process bus on that store. */
async function startChain(sink: SmtpSink, given?: MessageBus): Promise<Chain> {
  const { store, remove } = await openTestStore('chain');
  const bus = given ?? inProcessTestBus(logger, store);
  const events: EventEnvelope[] = [];
  const observer = await bus.subscribe(
    { group: OBSERVER_GROUP, types: ['lead.notified', ...OBSERVED] },
    async (event) => {
      events.push(event);
    },
  );
  const clock = { now: new Date('2024-03-01T10:00:00.000Z') };
  const now = () => clock.now;
  let passes = 0;
  const deps = { logger, store, bus, internal: noInternalCalls, publicBaseUrl: BASE_URL, now };
  const mail = { SMTP_URL: sink.url, MAIL_FROM: 'Lead Capture <alerts@crm.example.com>' };
  const modules: ServiceModule[] = [
    createNotificationService(deps, loadNotificationConfig(mail)),
    createSequenceService(deps, loadSequenceConfig({ ...mail, SEQUENCE_TICK_MS: '50' }), {
      onSchedulerPass: () => {
        passes++;
      },
    }),
  ];
  const app = createHttpApp({ logger });
  // One app for both services: the identities are signed for it, as `chain`.
  await app.register(internalIdentity, { trust: TEST_INTERNAL_KEYS.trust, service: 'chain' });
  for (const module of modules) await module.registerRoutes?.(app);
  for (const module of modules) await module.start?.();
  await app.ready();
  const userId = randomUUID();

  return {
    app,
    bus,
    events,
    clock,
    async schedulerPassed() {
      const from = passes;
      await waitFor('two scheduler passes', () => passes >= from + 2);
    },
    async call(method, url, body) {
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers: {
          [INTERNAL_IDENTITY_HEADER]: await signIdentity(
            { method: 'jwt', userId, role: 'admin', scope: 'full' },
            testSigner('gateway'),
            { service: 'chain', method, path: url },
          ),
        },
        ...(body === undefined ? {} : { payload: body as object }),
      });
      return { status: response.statusCode, body: response.body === '' ? undefined : response.json() };
    },
    async close() {
      await app.close();
      for (const module of modules) await module.stop?.();
      await observer.cancel();
      if (!given) await bus.close();
      await remove();
    },
  };
}

/**
 * lead.scored -> team mail, lead.notified -> enrolment, lead.enrolled -> the first step at once,
 * the second after its delay -> the lead is contacted: stopped. A redelivery doubles nothing and
 * emits nothing again.
 */
async function runChain(chain: Chain, sink: SmtpSink): Promise<void> {
  const ofType = (type: string) => chain.events.filter((event) => event.type === type);
  expect(
    (
      await chain.call('PUT', '/api/settings/notifications', {
        enabled: true,
        recipients: ['sales@team.example'],
        qualifications: ['hot'],
      })
    ).status,
  ).toBe(200);
  const created = await chain.call('POST', '/api/sequences', {
    name: 'Hot follow-up',
    steps: [
      {
        delayMinutes: 0,
        subject: 'Thanks, {{firstName}}',
        body: 'Hi {{firstName}}, thanks for reaching out.',
      },
      { delayMinutes: 60, subject: 'Next steps', body: 'Shall we talk, {{firstName}}?' },
      { delayMinutes: 60, subject: 'Last note', body: 'Bye {{firstName}}.' },
    ],
    match: { qualifications: ['hot'], minScore: 70 },
  });
  expect(created.status).toBe(201);
  const sequenceId = (created.body as { id: string }).id;

  const leadId = randomUUID();
  const scored = await chain.bus.publish(
    'lead.scored',
    {
      leadId,
      lead: leadSnapshot(),
      enrichment: { email: {}, geo: {}, company: {} },
      score: 88,
      qualification: 'hot',
      reasons: [{ points: 50, label: 'Asked for a demo' }],
    },
    { correlationId: randomUUID() },
  );

  const [teamMail, firstStep] = await sink.waitForMails(2, 10_000);
  const byRecipient = new Map([teamMail!, firstStep!].map((mail) => [mail.envelopeTo[0], mail]));
  const alert = byRecipient.get('sales@team.example')!;
  expect(alert.parsed.subject).toBe('Hot lead: Grace Hopper (US Navy), score 88');
  expect(alert.parsed.text).toContain(`${BASE_URL}/leads/${leadId}`);
  expect(byRecipient.get('grace@navy.example')!.parsed.subject).toBe('Thanks, Grace');

  await waitFor('lead.enrolled', () => ofType('lead.enrolled').length === 1, 10_000);
  const notified = ofType('lead.notified')[0]!.data as LeadNotified;
  expect(notified.notifications).toEqual([
    { id: expect.any(String), to: 'sales@team.example', status: 'sent' },
  ]);
  const enrolled = ofType('lead.enrolled')[0]!.data as LeadEnrolled;
  expect(enrolled.enrollments).toEqual([
    { sequenceId, sequenceName: 'Hot follow-up', enrollmentId: expect.any(String) },
  ]);
  for (const event of [...ofType('lead.notified'), ...ofType('lead.enrolled')]) {
    expect(event.correlationId).toBe(scored.correlationId);
  }
  const mails = await chain.call('GET', `/api/notifications?leadId=${leadId}`);
  expect(mails.body).toMatchObject({
    data: [{ to: 'sales@team.example', status: 'sent' }],
    pagination: { total: 1 },
  });

  // A redelivery emits nothing again: a cold lead scored after it goes through the chain alone.
  await chain.bus.publishEnvelope(scored);
  const marker = await chain.bus.publish('lead.scored', {
    ...(scored.data as LeadScored),
    leadId: randomUUID(),
    score: 10,
    qualification: 'cold',
  });
  await waitFor('the cold lead enrolled in nothing', () => ofType('lead.enrolled').length === 2, 10_000);
  expect(ofType('lead.notified').map((event) => event.causationId)).toEqual([scored.id, marker.id]);
  expect((ofType('lead.enrolled')[1]!.data as LeadEnrolled).enrollments).toEqual([]);

  await waitFor('step 1 recorded', async () => {
    const reply = await chain.call('GET', `/api/sequences/${sequenceId}/enrollments`);
    return (reply.body as { data: Array<{ currentStep: number }> }).data[0]?.currentStep === 1;
  });
  chain.clock.now = new Date(chain.clock.now.getTime() + HOUR_MS);
  await sink.waitForMails(3, 10_000);
  expect(sink.received[2]!.parsed.subject).toBe('Next steps');
  // The SMTP server has the mail before the scheduler records it and moves the enrolment on.
  await waitFor('step 2 recorded', async () => {
    const reply = await chain.call('GET', `/api/sequences/${sequenceId}/enrollments`);
    return (reply.body as { data: Array<{ currentStep: number }> }).data[0]?.currentStep === 2;
  });

  await chain.bus.publish('lead.updated', { leadId, changes: { status: 'contacted' } });
  await waitFor('lead.enrollment_stopped', () => ofType('lead.enrollment_stopped').length === 1, 10_000);
  const enrollments = await chain.call('GET', `/api/sequences/${sequenceId}/enrollments`);
  expect((enrollments.body as { data: unknown[] }).data).toEqual([
    expect.objectContaining({
      leadId,
      status: 'stopped',
      currentStep: 2,
      stoppedReason: 'lead_status_contacted',
    }),
  ]);

  chain.clock.now = new Date(chain.clock.now.getTime() + 2 * HOUR_MS);
  // The third step is due now: a whole scheduler pass after the move would have sent it.
  await chain.schedulerPassed();
  expect(sink.received.map((mail) => mail.envelopeTo[0])).toEqual([
    expect.any(String),
    expect.any(String),
    'grace@navy.example',
  ]);
  expect(ofType('lead.sequence_step_sent').map((event) => (event.data as { step: number }).step)).toEqual([
    1, 2,
  ]);
}

let chain: Chain | undefined;
let sink: SmtpSink | undefined;

afterEach(async () => {
  await chain?.close();
  await sink?.close();
  chain = undefined;
});

describe('the notification and sequence chain on the in-process bus', () => {
  it('mails the team, enrols the lead, sends its steps, and stops when the lead is contacted', async () => {
    sink = await startSmtpSink();
    chain = await startChain(sink);
    await runChain(chain, sink);
    await chain.close();
    chain = undefined;
  });
});

describe.runIf(rabbit)('the notification and sequence chain over RabbitMQ', () => {
  it('runs the same way on a real broker', async () => {
    sink = await startSmtpSink();
    const { bus, dispose } = await openTestRabbitBus('chain', { logger, extraGroups: [OBSERVER_GROUP] });
    try {
      chain = await startChain(sink, bus);
      await runChain(chain, sink);
      await chain.close();
      chain = undefined;
    } finally {
      await dispose();
    }
  });
});
