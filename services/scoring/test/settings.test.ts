import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL, type ScoringModel, SETTINGS_COLLECTION } from '../src/index.js';
import { enriched, type ScoringHarness, SOURCE_ID, startScoringHarness, waitFor } from './harness.js';

const URL = '/api/settings/scoring';

/** The default model with some changes, as a client would PUT it. */
function model(
  changes: { weights?: object; thresholds?: object; sourceWeights?: object } = {},
): ScoringModel {
  return {
    weights: { ...DEFAULT_MODEL.weights, ...changes.weights },
    thresholds: { ...DEFAULT_MODEL.thresholds, ...changes.thresholds },
    sourceWeights: { ...DEFAULT_MODEL.sourceWeights, ...changes.sourceWeights },
  } as ScoringModel;
}

describe('/api/settings/scoring', () => {
  let h: ScoringHarness;
  beforeAll(async () => {
    h = await startScoringHarness();
  });
  afterAll(async () => h?.close());
  beforeEach(async () => {
    await h.store.collection(SETTINGS_COLLECTION).deleteMany({});
  });

  it('answers the default model before anyone saved one', async () => {
    expect(await h.call('GET', URL)).toEqual({
      status: 200,
      body: {
        weights: {
          businessEmail: 20,
          freeEmail: 5,
          deliverableEmail: 10,
          undeliverableEmail: -15,
          disposableEmail: -30,
          roleEmail: -10,
          invalidEmail: -20,
          missingEmail: -10,
          validPhone: 15,
          companyKnown: 15,
          fullName: 10,
          paidCampaign: 10,
          utmCampaign: 5,
          referrer: 5,
        },
        thresholds: { hot: 70, warm: 40 },
        sourceWeights: {},
      },
    });
  });

  it('lets a read-only key read it', async () => {
    expect((await h.call('GET', URL, undefined, { method: 'api-key', scope: 'read' })).status).toBe(200);
  });

  it('replaces the model and answers it; GET then shows it', async () => {
    const upperCaseSource = SOURCE_ID.toUpperCase();
    const saved = await h.call(
      'PUT',
      URL,
      model({
        weights: { fullName: 0 },
        thresholds: { hot: 80, warm: 50 },
        sourceWeights: { [upperCaseSource]: -100 },
      }),
    );
    const expected = model({
      weights: { fullName: 0 },
      thresholds: { hot: 80, warm: 50 },
      sourceWeights: { [SOURCE_ID]: -100 },
    });
    expect(saved).toEqual({ status: 200, body: expected });
    expect(await h.call('GET', URL)).toEqual({ status: 200, body: expected });
  });

  it('scores leads with the model saved last (scores already given are kept)', async () => {
    const before = await h.bus.publish('lead.enriched', enriched());
    await waitFor('the first score', () => h.scored.some((event) => event.causationId === before.id));
    expect((await h.call('PUT', URL, model({ sourceWeights: { [SOURCE_ID]: -100 } }))).status).toBe(200);

    const after = await h.bus.publish('lead.enriched', enriched());
    await waitFor('the second score', () => h.scored.some((event) => event.causationId === after.id));
    const scoreOf = (id: string) =>
      (h.scored.find((event) => event.causationId === id)!.data as { score: number; qualification: string })
        .score;
    expect(scoreOf(before.id)).toBe(70);
    expect(scoreOf(after.id)).toBe(0);
  });

  it('refuses a read-only key with 403 and changes nothing', async () => {
    const reply = await h.call('PUT', URL, model({ thresholds: { hot: 90 } }), {
      method: 'api-key',
      scope: 'read',
    });
    expect(reply).toEqual({
      status: 403,
      body: { error: 'This API key is read-only; this operation needs a key with full scope' },
    });
    expect((await h.call('GET', URL)).body).toMatchObject({ thresholds: { hot: 70 } });
  });

  it('lets any member with full scope change it', async () => {
    expect((await h.call('PUT', URL, model(), { role: 'member', scope: 'full' })).status).toBe(200);
  });

  it('answers 401 without an identity', async () => {
    expect(await h.call('GET', URL, undefined, null)).toEqual({
      status: 401,
      body: { error: 'Missing internal identity' },
    });
    expect((await h.call('PUT', URL, model(), null)).status).toBe(401);
  });

  const { referrer: _dropped, ...weightsWithoutReferrer } = DEFAULT_MODEL.weights;
  it.each([
    ['weights missing', { thresholds: { hot: 70, warm: 40 }, sourceWeights: {} }, 'weights is required'],
    ['thresholds missing', { weights: DEFAULT_MODEL.weights, sourceWeights: {} }, 'thresholds is required'],
    [
      'sourceWeights missing',
      { weights: DEFAULT_MODEL.weights, thresholds: { hot: 70, warm: 40 } },
      'sourceWeights is required',
    ],
    ['an unknown top-level field', { ...model(), version: 2 }, 'version is not an allowed field'],
    ['a weight missing', { ...model(), weights: weightsWithoutReferrer }, 'weights.referrer is required'],
    ['an unknown weight', model({ weights: { vibes: 10 } }), 'weights.vibes is not an allowed field'],
    ['a fractional weight', model({ weights: { fullName: 2.5 } }), 'weights.fullName must be an integer'],
    [
      'a weight that is not a number',
      model({ weights: { fullName: 'ten' } }),
      'weights.fullName must be an integer',
    ],
    ['a weight above 100', model({ weights: { validPhone: 101 } }), 'weights.validPhone must be <= 100'],
    [
      'a weight below -100',
      model({ weights: { invalidEmail: -101 } }),
      'weights.invalidEmail must be >= -100',
    ],
    [
      'hot equal to warm',
      model({ thresholds: { hot: 50, warm: 50 } }),
      'thresholds.hot must be greater than thresholds.warm',
    ],
    [
      'hot below warm',
      model({ thresholds: { hot: 30, warm: 60 } }),
      'thresholds.hot must be greater than thresholds.warm',
    ],
    ['a threshold of 0', model({ thresholds: { warm: 0 } }), 'thresholds.warm must be >= 1'],
    ['a threshold above 100', model({ thresholds: { hot: 101 } }), 'thresholds.hot must be <= 100'],
    ['a threshold missing', { ...model(), thresholds: { hot: 70 } }, 'thresholds.warm is required'],
    [
      'an unknown threshold',
      model({ thresholds: { lukewarm: 20 } }),
      'thresholds.lukewarm is not an allowed field',
    ],
    [
      'a source key that is no UUID',
      model({ sourceWeights: { 'web-form': 10 } }),
      'sourceWeights: "web-form" is not a source id (a UUID)',
    ],
    [
      'a source weight above 100',
      model({ sourceWeights: { [SOURCE_ID]: 150 } }),
      `sourceWeights.${SOURCE_ID} must be <= 100`,
    ],
    [
      'a fractional source weight',
      model({ sourceWeights: { [SOURCE_ID]: 0.5 } }),
      `sourceWeights.${SOURCE_ID} must be an integer`,
    ],
    ['a body that is not an object', [1, 2], 'Request body must be an object'],
  ])('refuses %s with 400', async (_case, body, error) => {
    expect(await h.call('PUT', URL, body)).toEqual({ status: 400, body: { error } });
    expect((await h.call('GET', URL)).body).toEqual(model());
  });

  it.each([
    ['a weight sent as text', model({ weights: { fullName: '10' } }), 'weights.fullName must be an integer'],
    ['a weight of "1e400"', model({ weights: { fullName: '1e400' } }), 'weights.fullName must be an integer'],
    ['a threshold of "1e400"', model({ thresholds: { hot: '1e400' } }), 'thresholds.hot must be an integer'],
    [
      'a source weight of "1e400"',
      model({ sourceWeights: { [SOURCE_ID]: '1e400' } }),
      `sourceWeights.${SOURCE_ID} must be an integer`,
    ],
  ])('refuses %s with 400: JSON bodies are not coerced', async (_case, body, error) => {
    expect(await h.call('PUT', URL, body)).toEqual({ status: 400, body: { error } });
    expect((await h.call('GET', URL)).body).toEqual(model());
  });

  it.each([
    ['1e400', 'weights.fullName must be an integer'],
    ['-1e400', 'weights.fullName must be an integer'],
  ])('refuses a weight written %s in the JSON (Infinity once parsed) with 400', async (literal, error) => {
    const json = JSON.stringify(model()).replace('"fullName":10', `"fullName":${literal}`);
    expect(json).toContain(literal);
    const reply = await h.app.inject({
      method: 'PUT',
      url: URL,
      headers: { ...(await h.headers({ method: 'PUT', url: URL })), 'content-type': 'application/json' },
      payload: json,
    });
    expect({ status: reply.statusCode, body: reply.json() }).toEqual({ status: 400, body: { error } });
    expect((await h.call('GET', URL)).body).toEqual(model());
  });

  it('scores with the defaults where the stored model holds a number that is not finite (older data)', async () => {
    await h.store.collection(SETTINGS_COLLECTION).insertOne({
      _id: 'model',
      ...model({ thresholds: { hot: Number.POSITIVE_INFINITY } }),
      weights: { ...DEFAULT_MODEL.weights, fullName: Number.POSITIVE_INFINITY, validPhone: Number.NaN },
      sourceWeights: { [SOURCE_ID]: Number.NEGATIVE_INFINITY },
      updatedAt: new Date().toISOString(),
      updatedBy: 'someone',
    });
    expect(await h.call('GET', URL)).toEqual({ status: 200, body: model() });
    const published = await h.bus.publish('lead.enriched', enriched());
    await waitFor('the score', () => h.scored.some((event) => event.causationId === published.id));
    const scored = h.scored.find((event) => event.causationId === published.id)!.data as { score: number };
    expect(scored.score).toBe(70);
  });

  it('refuses more than 1000 source weights', async () => {
    const many = Object.fromEntries(
      Array.from({ length: 1001 }, (_, i) => [`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, 1]),
    );
    const reply = await h.call('PUT', URL, model({ sourceWeights: many }));
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      error: expect.stringMatching(/^sourceWeights must NOT have more than 1000/),
    });
  });
});
