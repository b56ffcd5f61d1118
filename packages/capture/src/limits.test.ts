import { type MappingTarget, SOURCE_FORMATS, type SourceFormat } from '@lead-capture/contracts';
import { describe, expect, it } from 'vitest';
import { FreeNames } from './free-names.js';
import { PAYLOAD_LIMITS, payloadShapeProblem } from './limits.js';
import { mapSubmission } from './map-submission.js';

/** Generous: these take milliseconds; the quadratic code they replace took seconds. */
const FAST_MS = 1000;

function timed<T>(work: () => T): { result: T; ms: number } {
  const started = performance.now();
  const result = work();
  return { result, ms: performance.now() - started };
}

/** More fields than a format may produce, within the items a payload's array or object may hold. */
const MANY = 9_000;
const repeated = <T>(item: T): T[] => Array.from({ length: MANY }, () => item);
const keyed = (name: (index: number) => string, value: unknown = 'x') =>
  Object.fromEntries(Array.from({ length: MANY }, (_, index) => [name(index), value]));

/** For each format, its payload with MANY fields, most of them under one repeated name. */
const HOSTILE: Record<Exclude<SourceFormat, 'generic'>, unknown> = {
  typeform: { form_response: { answers: repeated({}) } },
  'facebook-lead-ads': { field_data: repeated({ name: 'Email', values: [] }) },
  'google-ads': { user_column_data: repeated({ column_name: 'Email' }) },
  'hubspot-forms': { fields: repeated({ name: 'email' }) },
  linkedin: { formResponse: { answers: repeated({ questionId: 1 }) } },
  calendly: { payload: { questions_and_answers: repeated({ question: 'Company?' }) } },
  tally: { data: { fields: repeated({ label: 'Email' }) } },
  jotform: { rawRequest: keyed((index) => `q${index}_email`) },
  elementor: keyed((index) => `fields[${index}][title]`, 'Email'),
  'gravity-forms': keyed((index) => `${index}`),
  webflow: { payload: { data: keyed((index) => `field ${index}`) } },
  unbounce: { 'data.json': keyed((index) => `field ${index}`) },
  mailchimp: keyed((index) => `data[merges][F${index}]`),
  zapier: keyed((index) => `field ${index}`),
  elfsight: repeated({ name: 'Email', value: 'a@b.c' }),
  formstack: keyed((index) => `Name ${index}`, { first: 'Ada', last: 'L' }),
};

describe('payload limits, applied before any work per field', () => {
  it('the Typeform payload of 20,000 empty answers (60 kB) is refused at once as too large', () => {
    const body = `{"form_response":{"answers":[${Array(20_000).fill('{}').join(',')}]}}`;
    expect(body.length).toBeLessThan(61_000);
    for (const format of ['typeform', 'generic'] as const) {
      const { result, ms } = timed(() => mapSubmission(JSON.parse(body), {}, format));
      expect(result).toEqual({
        ok: false,
        error: 'Payload has an array of more than 10000 items',
        tooLarge: true,
      });
      expect(ms).toBeLessThan(FAST_MS);
    }
  });

  it.each(Object.entries(HOSTILE))(
    '%s: more fields than a format may produce are refused as too large, fast',
    (format, payload) => {
      const { result, ms } = timed(() => mapSubmission(payload, {}, format as SourceFormat));
      expect(result).toEqual({
        ok: false,
        error: `Payload has more than ${PAYLOAD_LIMITS.maxFlatFields} fields`,
        tooLarge: true,
      });
      expect(ms).toBeLessThan(FAST_MS);
    },
  );

  it('every format has its hostile case above', () => {
    expect(Object.keys(HOSTILE).sort()).toEqual(
      SOURCE_FORMATS.filter((format) => format !== 'generic').sort(),
    );
  });

  it.each([
    [
      'an array of 10,001 items',
      { a: Array(10_001).fill(0) },
      'Payload has an array of more than 10000 items',
    ],
    [
      'an object of 10,001 fields',
      { a: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, 0])) },
      'Payload has an object of more than 10000 fields',
    ],
    [
      '110,000 values in arrays within the limit',
      { a: Array.from({ length: 11 }, () => Array(10_000).fill(0)) },
      'Payload has more than 100000 values',
    ],
    [
      'nesting 100,000 deep',
      JSON.parse(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`),
      'Payload is nested more than 10 levels deep',
    ],
  ])('%s: refused as too large in every format', (_case, payload, error) => {
    for (const format of SOURCE_FORMATS) {
      const { result, ms } = timed(() => mapSubmission(payload, {}, format));
      expect(result).toEqual({ ok: false, error, tooLarge: true });
      expect(ms).toBeLessThan(FAST_MS);
    }
  });

  it('a payload within every limit passes the shape check', () => {
    expect(payloadShapeProblem({ a: Array(10_000).fill({ b: [1] }) })).toBeUndefined();
  });

  it('JSON text in a field is read through only when it is within the same limits', () => {
    const mappings = { 'rawRequest.q1_email': 'email' } as const;
    const small = { rawRequest: JSON.stringify({ q1_email: 'a@b.c' }) };
    expect(mapSubmission(small, mappings)).toMatchObject({
      ok: true,
      submission: { fields: { email: 'a@b.c' } },
    });
    const wide = { rawRequest: JSON.stringify({ q1_email: 'a@b.c', list: Array(10_001).fill(0) }) };
    const result = mapSubmission(wide, mappings);
    expect(result.ok && result.submission.fields).toEqual({});
  });

  it('raw-path mappings and the page URL cost no more than the generic format: bounded by the limits', () => {
    // 20 mappings, each a selector scanning an array of 10,000 items that the
    // format keeps whole (20 x 10,000 steps, as in the generic format), and a long landing page.
    const consents = Array.from({ length: PAYLOAD_LIMITS.maxItems }, (_, index) => ({ id: index }));
    const mappings: Record<string, MappingTarget> = Object.fromEntries(
      Array.from({ length: 20 }, (_, index) => [`legalConsentOptions[id=missing${index}].id`, 'company']),
    );
    const query = Array.from({ length: 200 }, (_, index) => `utm_x${index}=1`).join('&');
    const payload = {
      fields: [
        { name: 'email', value: 'a@b.c' },
        { name: 'pageUri', value: `https://example.org/?${query}&utm_source=ads`.slice(0, 2048) },
      ],
      legalConsentOptions: consents,
    };
    const generic = timed(() => mapSubmission(payload, mappings, 'generic'));
    const { result, ms } = timed(() => mapSubmission(payload, mappings, 'hubspot-forms'));
    // Mapped and kept, then refused for the custom data's size (the consents), as generic refuses it.
    expect(result).toEqual({ ok: false, error: 'Custom data is larger than 32 KiB' });
    expect(generic.result).toEqual(result);
    expect(ms).toBeLessThan(FAST_MS);
  });

  it('a Formstack field of long lines costs linear time (no backtracking in the sub-field reader)', () => {
    const line = `a${' '.repeat(30_000)}`;
    const payload = { one: `${line}\n${line}`, two: `${line}\nb = c` };
    const { result, ms } = timed(() => mapSubmission(payload, {}, 'formstack'));
    expect(result).toEqual({ ok: false, error: 'Custom data is larger than 32 KiB' });
    expect(ms).toBeLessThan(FAST_MS);
  });
});

describe('FreeNames', () => {
  /** The object's own-property lookups, as Object.hasOwn makes them. */
  function countingLookups() {
    const taken: Record<string, unknown> = {};
    let lookups = 0;
    const proxy = new Proxy(taken, {
      getOwnPropertyDescriptor(target, key) {
        lookups++;
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
    });
    return { taken, proxy, lookups: () => lookups };
  }

  it('numbers repeats of a name in order', () => {
    const taken: Record<string, unknown> = { 'Email (3)': 1 };
    const names = new FreeNames(taken, (name, suffix) => `${name} (${suffix})`);
    const given = [];
    for (let i = 0; i < 4; i++) {
      const name = names.of('Email');
      taken[name] = i;
      given.push(name);
    }
    expect(given).toEqual(['Email', 'Email (2)', 'Email (4)', 'Email (5)']);
  });

  it('n repeats of one name cost O(n) lookups, not O(n²)', () => {
    const { taken, proxy, lookups } = countingLookups();
    const names = new FreeNames(proxy, (name, suffix) => `${name} (${suffix})`);
    const n = 5_000;
    for (let i = 0; i < n; i++) taken[names.of('answer')] = i;
    expect(Object.keys(taken)).toHaveLength(n);
    expect(lookups()).toBeLessThanOrEqual(3 * n);
  });
});
