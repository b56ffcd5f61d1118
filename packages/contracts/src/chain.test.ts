import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  assertConsumable,
  CONSUMER_GROUPS,
  type ConsumerGroupName,
  consumerGroup,
  expandEventPatterns,
  type GroupEventType,
  matchesEventPattern,
  PIPELINE,
  READ_MODELS,
  type WEBHOOK_EVENT_TYPES,
} from './chain.js';
import { EVENT_SCHEMAS, EVENT_TYPES, isKnownEventType } from './events/index.js';
import { SAMPLE_EVENT_DATA } from './samples.js';
import { validateEvent } from './validate.js';

describe('the capture pipeline', () => {
  it('starts at lead.received and ends at lead.enrolled', () => {
    expect(PIPELINE[0].consumes).toBe('lead.received');
    expect(PIPELINE[PIPELINE.length - 1]!.publishes).toBe('lead.enrolled');
  });

  it('is the order the product promises: capture, enrich, score, notify, enrol', () => {
    expect(PIPELINE.map((s) => s.stage)).toEqual([
      'lead',
      'enrichment',
      'scoring',
      'notification',
      'sequence',
    ]);
  });

  it.each(
    PIPELINE.slice(1).map((stage, i) => [stage.stage, stage.consumes, PIPELINE[i]!.publishes] as const),
  )('%s consumes %s, which the stage before it publishes', (_stage, consumes, publishedBefore) => {
    expect(consumes).toBe(publishedBefore);
  });

  it.each(PIPELINE)(
    '$stage consumes and publishes event types that have a schema and a valid sample',
    (stage) => {
      for (const type of [stage.consumes, stage.publishes]) {
        expect(isKnownEventType(type)).toBe(true);
        expect(validateEvent(type, SAMPLE_EVENT_DATA[type])).toBeNull();
      }
    },
  );

  it('never publishes the same event from two stages (each event has one producer in the chain)', () => {
    const published = PIPELINE.map((s) => s.publishes);
    expect(new Set(published).size).toBe(published.length);
  });
});

describe('read models', () => {
  it.each(READ_MODELS.map((m) => [m.consumer, m.consumes] as const))(
    '%s consumes only types (or patterns) that have schemas: %s',
    (_consumer, consumes) => {
      expect(() => assertConsumable(consumes)).not.toThrow();
      for (const pattern of consumes) expect(expandEventPatterns([pattern]).length).toBeGreaterThan(0);
    },
  );

  it('lets the lead service persist every pipeline result after its own stage', () => {
    const leadConsumes = expandEventPatterns(
      READ_MODELS.filter((m) => m.consumer === 'lead').flatMap((m) => m.consumes),
    );
    for (const stage of PIPELINE.slice(1)) expect(leadConsumes).toContain(stage.publishes);
  });

  it('broadcasts to the gateway every lead change a dashboard shows, and nothing else', () => {
    const gateway = READ_MODELS.find((m) => m.consumer === 'gateway')!;
    expect(gateway.broadcast).toBe(true);
    expect('group' in gateway).toBe(false);
    expect(expandEventPatterns(gateway.consumes).sort()).toEqual([
      'lead.captured',
      'lead.deleted',
      'lead.enrolled',
      'lead.import_progress',
      'lead.merged',
      'lead.scored',
      'lead.updated',
    ]);
    // Every outcome of the chain a list shows: the capture, the score, the enrolment.
    for (const stage of ['lead', 'scoring', 'sequence']) {
      const { publishes } = PIPELINE.find((s) => s.stage === stage)!;
      expect(gateway.consumes).toContain(publishes);
    }
  });
});

describe('every event type', () => {
  it('has a schema and a sample that passes it', () => {
    expect(EVENT_TYPES.length).toBe(22);
    for (const type of EVENT_TYPES) {
      expect(EVENT_SCHEMAS[type]).toBeDefined();
      expect(validateEvent(type, SAMPLE_EVENT_DATA[type])).toBeNull();
    }
  });
});

describe('matchesEventPattern (AMQP topic rules)', () => {
  it.each([
    ['lead.received', 'lead.received', true],
    ['lead.received', 'lead.captured', false],
    ['lead.*', 'lead.received', true],
    ['lead.*', 'source.created', false],
    ['*.deleted', 'user.deleted', true],
    ['#', 'source.token_rotated', true],
    ['source.#', 'source.token_rotated', true],
    ['source.#', 'source', true],
    ['lead.*.x', 'lead.received', false],
    ['lead', 'lead.received', false],
  ])('%s matches %s: %s', (pattern, type, expected) => {
    expect(matchesEventPattern(pattern, type)).toBe(expected);
  });
});

describe('assertConsumable', () => {
  it('passes for known types and patterns that cover some', () => {
    expect(() => assertConsumable(['lead.received', 'source.*', 'user.#'])).not.toThrow();
  });

  it('names every consumed type that has no schema, so the service stops at start', () => {
    expect(() => assertConsumable(['lead.received', 'lead.recieved', 'billing.*'])).toThrow(
      'No event schema for consumed event type(s): lead.recieved, billing.*',
    );
  });
});

describe('consumer groups', () => {
  it('names every durable consumer once, each bound to known event types', () => {
    const names = CONSUMER_GROUPS.map(({ group }) => group);
    expect(new Set(names).size).toBe(names.length);
    for (const { group, types } of CONSUMER_GROUPS) {
      expect(group).toMatch(/^[a-z]+\.[a-z-]+\.[a-z-]+$/);
      expect(() => assertConsumable(types), group).not.toThrow();
    }
  });

  it('declares a group for every pipeline stage, bound to what the stage consumes', () => {
    for (const stage of PIPELINE) {
      expect(consumerGroup(stage.group).types).toEqual([stage.consumes]);
    }
    expect(() => consumerGroup('nobody.listens.here' as ConsumerGroupName)).toThrow(/Unknown consumer group/);
  });

  it('types each group with the event types its patterns cover', () => {
    expectTypeOf<GroupEventType<'intake.source.sync'>>().toEqualTypeOf<
      'source.created' | 'source.updated' | 'source.token_rotated' | 'source.deleted'
    >();
    expectTypeOf<GroupEventType<'scoring.lead.score'>>().toEqualTypeOf<'lead.enriched'>();
    expectTypeOf<GroupEventType<'webhooks.lead.deliver'>>().toEqualTypeOf<
      (typeof WEBHOOK_EVENT_TYPES)[number]
    >();
    expectTypeOf<'nobody.listens.here'>().not.toExtend<ConsumerGroupName>();
  });
});

describe('the CSV import source', () => {
  it('has a valid UUID, so sourceId filters accept it', async () => {
    const { CSV_IMPORT_SOURCE } = await import('./index.js');
    expect(CSV_IMPORT_SOURCE.id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });
});
