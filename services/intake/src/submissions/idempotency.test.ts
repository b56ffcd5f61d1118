import { describe, expect, it } from 'vitest';
import { canonicalJson, dedupeKeyOf, dedupeKeysOf, idempotencyKeyProblem } from './idempotency.js';

describe('dedupe keys', () => {
  it('the same payload in another key order is the same delivery', () => {
    const a = dedupeKeyOf('source', undefined, { email: 'a@b.c', extra: { x: 1, y: [1, { b: 2, a: 1 }] } });
    const b = dedupeKeyOf('source', undefined, { extra: { y: [1, { a: 1, b: 2 }], x: 1 }, email: 'a@b.c' });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs by source, by payload, by array order, and between a header key and a payload', () => {
    const base = dedupeKeyOf('source', undefined, { list: [1, 2] });
    expect(dedupeKeyOf('other', undefined, { list: [1, 2] })).not.toBe(base);
    expect(dedupeKeyOf('source', undefined, { list: [2, 1] })).not.toBe(base);
    expect(dedupeKeyOf('source', 'key-1', { list: [1, 2] })).not.toBe(base);
    expect(dedupeKeyOf('source', 'key-1', { anything: 'else' })).toBe(dedupeKeyOf('source', 'key-1', {}));
  });

  it('a signed source is known by its payload, and by its Idempotency-Key when one is sent', () => {
    const payload = { email: 'a@b.c' };
    const byPayload = dedupeKeyOf('source', undefined, payload);
    const byKey = dedupeKeyOf('source', 'key-1', payload);
    expect(dedupeKeysOf('source', 'key-1', payload, false)).toEqual([byKey]);
    expect(dedupeKeysOf('source', undefined, payload, false)).toEqual([byPayload]);
    expect(dedupeKeysOf('source', undefined, payload, true)).toEqual([byPayload]);
    expect(dedupeKeysOf('source', 'key-1', payload, true)).toEqual([byPayload, byKey]);
  });

  it('canonical JSON sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ f: 1, e: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"e":2,"f":1}]},"b":1}',
    );
  });
});

describe('the Idempotency-Key header', () => {
  it.each([['a'], ['x'.repeat(255)], ['order-42:retry/1']])('accepts %j', (key) => {
    expect(idempotencyKeyProblem(key)).toBeNull();
  });

  it.each([[''], ['x'.repeat(256)], ['has space'], ['ünïcode']])('refuses %j', (key) => {
    expect(idempotencyKeyProblem(key)).toBe('Idempotency-Key must be 1 to 255 visible ASCII characters');
  });
});
