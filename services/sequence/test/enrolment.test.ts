import { randomUUID } from 'node:crypto';
import { createInProcessBus, type MessageBus } from '@lead-capture/bus';
import {
  type EventEnvelope,
  type LeadEnrolled,
  type LeadEnrollmentStopped,
  type LeadSequenceStepSent,
  validateEvent,
} from '@lead-capture/contracts';
import { SAMPLE_EVENT_DATA } from '@lead-capture/contracts/samples';
import { type SmtpSink, startSmtpSink } from '@lead-capture/mailer/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENROL_GROUP, LEAD_CHANGES_GROUP } from '../src/service.js';
import {
  type EnrollmentView,
  leadSnapshot,
  logger,
  notifiedEvent,
  type SequenceHarness,
  type SequenceView,
  startSequenceHarness,
  waitFor,
} from './harness.js';

const HOUR_MS = 3_600_000;

let h: SequenceHarness;
let sink: SmtpSink;

beforeEach(async () => {
  sink = await startSmtpSink();
  h = await startSequenceHarness({ smtpUrl: sink.url });
});

afterEach(async () => {
  await h?.close();
  await sink?.close();
});

const twoSteps = {
  name: 'Hot welcome',
  steps: [
    {
      delayMinutes: 0,
      subject: 'Welcome, {{firstName|there}}',
      body: 'Hello {{firstName}} at {{company|your company}}!',
    },
    { delayMinutes: 60, subject: 'Still there, {{firstName}}?', body: 'Checking in, {{ firstName }}.' },
  ],
  match: { qualifications: ['hot'] },
};

async function createSequence(body: Record<string, unknown> = twoSteps): Promise<SequenceView> {
  const reply = await h.call('POST', '/api/sequences', body);
  expect(reply.status).toBe(201);
  return reply.body as SequenceView;
}

async function enrollmentsOf(sequenceId: string): Promise<EnrollmentView[]> {
  const reply = await h.call('GET', `/api/sequences/${sequenceId}/enrollments`);
  expect(reply.status).toBe(200);
  return (reply.body as { data: EnrollmentView[] }).data;
}

const dataOf = <T>(type: string) => h.eventsOf(type).map((event) => event.data as T);

function advanceClock(ms: number): void {
  h.clock.now = new Date(h.clock.now.getTime() + ms);
}

describe('enrolment and steps', () => {
  it('enrols a matching lead, sends the first step at once and the next one after its delay', async () => {
    const sequence = await createSequence();
    const notified = notifiedEvent();
    const published = await h.bus.publish('lead.notified', notified, { correlationId: randomUUID() });

    await waitFor('lead.enrolled', () => h.eventsOf('lead.enrolled').length === 1);
    const [enrolledEvent] = h.eventsOf('lead.enrolled');
    expect(enrolledEvent?.causationId).toBe(published.id);
    expect(enrolledEvent?.correlationId).toBe(published.correlationId);
    const [enrolled] = dataOf<LeadEnrolled>('lead.enrolled');
    expect(enrolled).toEqual({
      leadId: notified.leadId,
      enrollments: [
        { sequenceId: sequence.id, sequenceName: 'Hot welcome', enrollmentId: expect.any(String) },
      ],
    });

    const [first] = await sink.waitForMails(1);
    expect(first!.envelopeTo).toEqual(['grace@navy.example']);
    expect(first!.parsed.from?.value).toEqual([
      { name: 'Ada at Analytical', address: 'ada@crm.example.com' },
    ]);
    expect(first!.parsed.subject).toBe('Welcome, Grace');
    expect(first!.parsed.text?.trim()).toBe('Hello Grace at US Navy!');

    await waitFor('step 1 recorded', async () => (await enrollmentsOf(sequence.id))[0]?.currentStep === 1);
    const [afterFirst] = await enrollmentsOf(sequence.id);
    expect(afterFirst).toEqual({
      id: enrolled!.enrollments[0]!.enrollmentId,
      leadId: notified.leadId,
      status: 'active',
      currentStep: 1,
      nextStepAt: new Date(h.clock.now.getTime() + HOUR_MS).toISOString(),
      paused: false,
      enrolledAt: h.clock.now.toISOString(),
      lead: { firstName: 'Grace', lastName: 'Hopper', email: 'grace@navy.example', company: 'US Navy' },
    });

    advanceClock(HOUR_MS - 1000);
    await h.schedulerPassed();
    expect(sink.received).toHaveLength(1);

    advanceClock(1000);
    const mails = await sink.waitForMails(2);
    expect(mails[1]!.parsed.subject).toBe('Still there, Grace?');
    expect(mails[1]!.parsed.text?.trim()).toBe('Checking in, Grace.');
    await waitFor('completion', async () => (await enrollmentsOf(sequence.id))[0]?.status === 'completed');
    expect((await enrollmentsOf(sequence.id))[0]).toMatchObject({ currentStep: 2, nextStepAt: null });

    await waitFor('two step events', () => h.eventsOf('lead.sequence_step_sent').length === 2);
    expect(dataOf<LeadSequenceStepSent>('lead.sequence_step_sent')).toEqual(
      [1, 2].map((step, i) => ({
        leadId: notified.leadId,
        sequenceId: sequence.id,
        sequenceName: 'Hot welcome',
        enrollmentId: afterFirst!.id,
        step,
        status: 'sent',
        messageId: mails[i]!.parsed.messageId,
      })),
    );
    expect(
      h.eventsOf('lead.sequence_step_sent').every((e) => e.correlationId === published.correlationId),
    ).toBe(true);
  });

  it('enrols only in active sequences the lead matches, and says so when there is none', async () => {
    const hot = await createSequence();
    const inactive = await createSequence({ ...twoSteps, name: 'Paused', active: false });
    const tagged = await createSequence({ ...twoSteps, name: 'VIP', match: { tags: ['vip'], minScore: 90 } });
    const vip = notifiedEvent({ score: 95, lead: leadSnapshot({ tags: ['VIP', 'press'] }) });
    const lowVip = notifiedEvent({ score: 80, lead: leadSnapshot({ tags: ['vip'] }) });
    const cold = notifiedEvent({ qualification: 'cold', score: 10 });
    for (const notified of [vip, lowVip, cold]) await h.bus.publish('lead.notified', notified);

    await waitFor('three lead.enrolled', () => h.eventsOf('lead.enrolled').length === 3);
    const byLead = Object.fromEntries(
      dataOf<LeadEnrolled>('lead.enrolled').map((e) => [
        e.leadId,
        e.enrollments.map((x) => x.sequenceId).sort(),
      ]),
    );
    expect(byLead).toEqual({
      [vip.leadId]: [hot.id, tagged.id].sort(),
      [lowVip.leadId]: [hot.id],
      [cold.leadId]: [],
    });
    expect(await enrollmentsOf(inactive.id)).toEqual([]);
  });

  it('does not enrol a lead already contacted, converted or closed', async () => {
    await createSequence();
    await h.bus.publish('lead.notified', notifiedEvent({ lead: leadSnapshot({ status: 'converted' }) }));
    await waitFor('lead.enrolled', () => h.eventsOf('lead.enrolled').length === 1);
    expect(dataOf<LeadEnrolled>('lead.enrolled')[0]?.enrollments).toEqual([]);
  });

  it('enrols no lead whose submission asked for none (an import with enrol=false), and the others as usual', async () => {
    const sequence = await createSequence();
    const skipped = notifiedEvent({ lead: leadSnapshot({ enrol: false }) });
    const enrolled = notifiedEvent({ lead: leadSnapshot({ enrol: true }) });
    const unsaid = notifiedEvent();
    for (const notified of [skipped, enrolled, unsaid]) await h.bus.publish('lead.notified', notified);
    await waitFor('three lead.enrolled', () => h.eventsOf('lead.enrolled').length === 3);
    const byLead = Object.fromEntries(
      dataOf<LeadEnrolled>('lead.enrolled').map((e) => [e.leadId, e.enrollments.length]),
    );
    expect(byLead).toEqual({ [skipped.leadId]: 0, [enrolled.leadId]: 1, [unsaid.leadId]: 1 });
    expect((await enrollmentsOf(sequence.id)).map((entry) => entry.leadId).sort()).toEqual(
      [enrolled.leadId, unsaid.leadId].sort(),
    );
  });

  it('doubles nothing when lead.notified is delivered again, nor when the lead is notified again later', async () => {
    const sequence = await createSequence();
    const notified = notifiedEvent();
    const published = await h.bus.publish('lead.notified', notified);
    await waitFor('lead.enrolled', () => h.eventsOf('lead.enrolled').length === 1);
    await sink.waitForMails(1);

    await h.bus.publishEnvelope(published);
    const later = await h.bus.publish('lead.notified', { ...notified, score: 99 });
    await h.handled.settled('the three lead.notified', [published, published, later], { group: ENROL_GROUP });
    await h.schedulerPassed();
    await h.drained();
    // The redelivery emitted nothing again; the later notification reports no new enrolment.
    expect(h.eventsOf('lead.enrolled').map((event) => event.causationId)).toEqual([published.id, later.id]);
    expect(dataOf<LeadEnrolled>('lead.enrolled')[1]?.enrollments).toEqual([]);
    expect(await enrollmentsOf(sequence.id)).toHaveLength(1);
    expect(sink.received).toHaveLength(1);
    expect(h.eventsOf('lead.sequence_step_sent')).toHaveLength(1);
  });
});

describe('stopping', () => {
  async function enrolOne(): Promise<{ sequence: SequenceView; leadId: string }> {
    const sequence = await createSequence();
    const notified = notifiedEvent();
    await h.bus.publish('lead.notified', notified);
    await sink.waitForMails(1);
    await waitFor('step 1 recorded', async () => (await enrollmentsOf(sequence.id))[0]?.currentStep === 1);
    return { sequence, leadId: notified.leadId };
  }

  async function expectStopped(sequence: SequenceView, leadId: string, reason: string): Promise<void> {
    await waitFor('lead.enrollment_stopped', () => h.eventsOf('lead.enrollment_stopped').length === 1);
    const [enrollment] = await enrollmentsOf(sequence.id);
    expect(enrollment).toMatchObject({ leadId, status: 'stopped', stoppedReason: reason, nextStepAt: null });
    expect(dataOf<LeadEnrollmentStopped>('lead.enrollment_stopped')).toEqual([
      { leadId, sequenceId: sequence.id, sequenceName: sequence.name, enrollmentId: enrollment!.id, reason },
    ]);
    advanceClock(2 * HOUR_MS);
    await h.schedulerPassed();
    expect(sink.received).toHaveLength(1);
  }

  it.each(['contacted', 'converted', 'closed'])(
    'stops when the lead is %s, once however often told',
    async (status) => {
      const { sequence, leadId } = await enrolOne();
      const changed = await h.bus.publish('lead.updated', { leadId, changes: { status } });
      await expectStopped(sequence, leadId, `lead_status_${status}`);
      expect(h.eventsOf('lead.enrollment_stopped')[0]?.causationId).toBe(changed.id);
      await h.bus.publishEnvelope(changed);
      await h.handled.settled('the lead.updated twice', [changed, changed], { group: LEAD_CHANGES_GROUP });
      await h.drained();
      expect(h.eventsOf('lead.enrollment_stopped')).toHaveLength(1);
    },
  );

  it('goes on when the lead changes in other ways', async () => {
    const { sequence, leadId } = await enrolOne();
    const changes = [
      await h.bus.publish('lead.updated', { leadId, changes: { notes: 'Called, no answer' } }),
      await h.bus.publish('lead.updated', { leadId, changes: { status: 'qualified' } }),
    ];
    // Both changes are handled before the clock moves: the step sent after them proves they did not stop it.
    await h.handled.settled('the two lead.updated', changes, { group: LEAD_CHANGES_GROUP });
    advanceClock(HOUR_MS);
    await sink.waitForMails(2);
    await waitFor('completion', async () => (await enrollmentsOf(sequence.id))[0]?.status === 'completed');
  });

  it('stops when the lead is deleted', async () => {
    const { sequence, leadId } = await enrolOne();
    await h.bus.publish('lead.deleted', { leadId });
    await expectStopped(sequence, leadId, 'lead_deleted');
  });

  it('stops the duplicate merged away, not the lead it was merged into', async () => {
    const { sequence, leadId } = await enrolOne();
    const primary = notifiedEvent();
    await h.bus.publish('lead.notified', primary);
    await sink.waitForMails(2);
    await h.bus.publish('lead.merged', { primaryId: primary.leadId, duplicateId: leadId });
    await waitFor('lead.enrollment_stopped', () => h.eventsOf('lead.enrollment_stopped').length === 1);
    const enrollments = await enrollmentsOf(sequence.id);
    expect(enrollments.find((e) => e.leadId === leadId)).toMatchObject({
      status: 'stopped',
      stoppedReason: 'lead_merged',
    });
    expect(enrollments.find((e) => e.leadId === primary.leadId)).toMatchObject({ status: 'active' });
  });

  it('never enrols a lead whose stop arrived before its notification', async () => {
    await createSequence();
    const notified = notifiedEvent();
    const stop = await h.bus.publish('lead.updated', {
      leadId: notified.leadId,
      changes: { status: 'contacted' },
    });
    await h.handled.settled('the stop', [stop], { group: LEAD_CHANGES_GROUP });
    await h.bus.publish('lead.notified', notified);
    await waitFor('lead.enrolled', () => h.eventsOf('lead.enrolled').length === 1);
    expect(dataOf<LeadEnrolled>('lead.enrolled')[0]?.enrollments).toEqual([]);
    await h.schedulerPassed();
    expect(sink.received).toHaveLength(0);
  });

  it('stops with no_email when the lead has no address, sending nothing', async () => {
    const sequence = await createSequence();
    const notified = notifiedEvent({ lead: leadSnapshot({ email: null }) });
    await h.bus.publish('lead.notified', notified);
    await waitFor('lead.enrollment_stopped', () => h.eventsOf('lead.enrollment_stopped').length === 1);
    expect((await enrollmentsOf(sequence.id))[0]).toMatchObject({
      status: 'stopped',
      stoppedReason: 'no_email',
      currentStep: 0,
    });
    expect(sink.received).toHaveLength(0);
  });

  it.each([
    ['a list', 'victim1@example.org, victim2@example.org; victim3@example.org'],
    ['a list without spaces', 'victim1@example.org,victim2@example.org'],
    ['a display name', 'Grace <victim@example.org>'],
    ['a header break', 'grace@navy.example\r\nBcc: victim@example.org'],
  ])('never mails a lead whose stored e-mail is %s: stops with email_invalid', async (_case, email) => {
    const sequence = await createSequence();
    const bad = notifiedEvent({ lead: leadSnapshot({ email, company: 'Win\r\nBcc: victim@example.org' }) });
    await h.bus.publish('lead.notified', bad);
    await waitFor('lead.enrollment_stopped', () => h.eventsOf('lead.enrollment_stopped').length === 1);
    expect(dataOf<LeadEnrollmentStopped>('lead.enrollment_stopped')[0]).toMatchObject({
      leadId: bad.leadId,
      reason: 'email_invalid',
    });

    // A good lead enrolled afterwards is mailed, and its mail is the only one the server ever saw.
    await h.bus.publish('lead.notified', notifiedEvent());
    const mails = await sink.waitForMails(1);
    await waitFor('lead.sequence_step_sent', () => h.eventsOf('lead.sequence_step_sent').length === 1);
    expect(mails.map((mail) => mail.envelopeTo)).toEqual([['grace@navy.example']]);
    expect(dataOf<LeadSequenceStepSent>('lead.sequence_step_sent')).toEqual([
      expect.objectContaining({ step: 1, status: 'sent' }),
    ]);
    const stopped = (await enrollmentsOf(sequence.id)).find((enrollment) => enrollment.leadId === bad.leadId);
    expect(stopped).toMatchObject({ status: 'stopped', stoppedReason: 'email_invalid', currentStep: 0 });
  });

  it('stops with email_rejected when the server refuses the address for good', async () => {
    const sequence = await createSequence();
    sink.rejectRecipient('grace@navy.example');
    await h.bus.publish('lead.notified', notifiedEvent());
    await waitFor('lead.enrollment_stopped', () => h.eventsOf('lead.enrollment_stopped').length === 1);
    expect(dataOf<LeadSequenceStepSent>('lead.sequence_step_sent')).toEqual([
      expect.objectContaining({ step: 1, status: 'failed' }),
    ]);
    expect((await enrollmentsOf(sequence.id))[0]).toMatchObject({
      status: 'stopped',
      stoppedReason: 'email_rejected',
    });
  });

  it('stops every enrolment of a deleted sequence', async () => {
    const { sequence, leadId } = await enrolOne();
    expect((await h.call('DELETE', `/api/sequences/${sequence.id}`)).status).toBe(204);
    await waitFor('lead.enrollment_stopped', () => h.eventsOf('lead.enrollment_stopped').length === 1);
    expect(dataOf<LeadEnrollmentStopped>('lead.enrollment_stopped')[0]).toMatchObject({
      leadId,
      sequenceName: sequence.name,
      reason: 'sequence_deleted',
    });
  });
});

describe('the schedule', () => {
  it('retries a step the server deferred after a backoff, and sends it once', async () => {
    const sequence = await createSequence();
    sink.failNext(1);
    await h.bus.publish('lead.notified', notifiedEvent());
    await waitFor('the deferred attempt', async () => {
      const [enrollment] = await enrollmentsOf(sequence.id);
      return enrollment?.nextStepAt === new Date(h.clock.now.getTime() + 60_000).toISOString();
    });
    expect(sink.received).toHaveLength(0);
    expect(h.eventsOf('lead.sequence_step_sent')).toHaveLength(0);

    advanceClock(60_000);
    await sink.waitForMails(1);
    await waitFor('step 1 recorded', async () => (await enrollmentsOf(sequence.id))[0]?.currentStep === 1);
    await waitFor('the step event', () => h.eventsOf('lead.sequence_step_sent').length === 1);
    expect(dataOf<LeadSequenceStepSent>('lead.sequence_step_sent')[0]).toMatchObject({
      step: 1,
      status: 'sent',
    });
  });

  it('holds due steps while the sequence is inactive and sends them, renamed, once it is active again', async () => {
    const sequence = await createSequence();
    await h.bus.publish('lead.notified', notifiedEvent());
    await sink.waitForMails(1);
    await waitFor('step 1 recorded', async () => (await enrollmentsOf(sequence.id))[0]?.currentStep === 1);
    const { id: _id, createdAt: _c, updatedAt: _u, ...definition } = sequence;
    expect(
      (await h.call('PUT', `/api/sequences/${sequence.id}`, { ...definition, active: false })).status,
    ).toBe(200);
    expect((await enrollmentsOf(sequence.id))[0]).toMatchObject({ paused: true, status: 'active' });

    advanceClock(2 * HOUR_MS);
    await h.schedulerPassed();
    expect(sink.received).toHaveLength(1);

    expect(
      (
        await h.call('PUT', `/api/sequences/${sequence.id}`, {
          ...definition,
          name: 'Hot welcome 2',
          active: true,
        })
      ).status,
    ).toBe(200);
    await sink.waitForMails(2);
    await waitFor('the step event', () => h.eventsOf('lead.sequence_step_sent').length === 2);
    expect(dataOf<LeadSequenceStepSent>('lead.sequence_step_sent')[1]).toMatchObject({
      step: 2,
      sequenceName: 'Hot welcome 2',
    });
    // The step's event goes out before the enrolment is marked completed: wait for that write.
    await waitFor('completion', async () => (await enrollmentsOf(sequence.id))[0]?.status === 'completed');
    expect((await enrollmentsOf(sequence.id))[0]).toMatchObject({ status: 'completed', paused: false });
  });

  it('survives a restart: a step due later is sent by the service started again on the same store', async () => {
    const sequence = await createSequence();
    await h.bus.publish('lead.notified', notifiedEvent());
    await sink.waitForMails(1);
    await waitFor('step 1 recorded', async () => (await enrollmentsOf(sequence.id))[0]?.currentStep === 1);
    await h.module.stop?.();

    advanceClock(HOUR_MS);
    // stop() resolved after the scheduler's last pass: no instance runs, so nothing can be sent now.
    expect(sink.received).toHaveLength(1);
    await h.startReplica();
    await sink.waitForMails(2);
    await waitFor('completion', async () => (await enrollmentsOf(sequence.id))[0]?.status === 'completed');
  });

  it('never sends a step twice with two schedulers on one store', async () => {
    await createSequence({
      ...twoSteps,
      steps: [twoSteps.steps[0], { ...twoSteps.steps[1], delayMinutes: 0 }],
    });
    await h.startReplica();
    const leads = Array.from({ length: 12 }, (_, i) =>
      notifiedEvent({ lead: leadSnapshot({ email: `lead${i}@example.com` }) }),
    );
    for (const notified of leads) await h.bus.publish('lead.notified', notified);

    await sink.waitForMails(leads.length * 2, 15_000);
    await h.schedulerPassed([0, 1]);
    const sent = sink.received.map((mail) => `${mail.envelopeTo[0]} ${mail.parsed.subject}`);
    expect(sent).toHaveLength(leads.length * 2);
    expect(new Set(sent).size).toBe(sent.length);
    await waitFor(
      'every step event',
      () => h.eventsOf('lead.sequence_step_sent').length === leads.length * 2,
    );
  });

  it('keeps step and stop events nobody can take yet, and publishes them once someone can', async () => {
    await h.close();
    // Only the service's own groups and an observer of lead.enrolled exist: its other events are unroutable.
    let bus!: MessageBus;
    h = await startSequenceHarness({
      smtpUrl: sink.url,
      bus: (store) => {
        bus = createInProcessBus({ logger, store, validate: validateEvent });
        return bus;
      },
      observe: ['lead.enrolled'],
    });
    const sequence = await createSequence();
    const notified = notifiedEvent();
    await h.bus.publish('lead.notified', notified);
    await sink.waitForMails(1);
    await waitFor('step 1 recorded', async () => (await enrollmentsOf(sequence.id))[0]?.currentStep === 1);
    await h.bus.publish('lead.deleted', { leadId: notified.leadId });
    await waitFor('the stop', async () => (await enrollmentsOf(sequence.id))[0]?.status === 'stopped');

    const late: EventEnvelope[] = [];
    await bus.subscribe(
      { group: 'test.sequence.late', types: ['lead.sequence_step_sent', 'lead.enrollment_stopped'] },
      async (event) => {
        late.push(event);
      },
    );
    advanceClock(5000);
    await waitFor('both events relayed', () => late.length === 2);
    expect(late.map((event) => event.type).sort()).toEqual([
      'lead.enrollment_stopped',
      'lead.sequence_step_sent',
    ]);
    advanceClock(HOUR_MS);
    await h.schedulerPassed();
    await waitFor(
      'the sequence outbox emptied',
      async () => (await h.store.collection('sequence_outbox').countDocuments({})) === 0,
    );
    // A marker through the same queue: once it arrives, anything relayed before it has arrived too.
    const marker = await bus.publish('lead.enrollment_stopped', SAMPLE_EVENT_DATA['lead.enrollment_stopped']);
    await waitFor('the marker', () => late.some((event) => event.id === marker.id));
    expect(late).toHaveLength(3);
  });
});
