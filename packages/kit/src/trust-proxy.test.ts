import { describe, expect, it } from 'vitest';
import { parseTrustProxy, toFastifyTrustProxy } from './trust-proxy.js';

describe('TRUST_PROXY', () => {
  it.each([
    ['false', false],
    ['0', false],
    ['2', 2],
    ['127.0.0.1', ['127.0.0.1']],
    ['10.0.0.0/8, ::1 ,fd00::/8', ['10.0.0.0/8', '::1', 'fd00::/8']],
  ])('reads %j', (raw, expected) => {
    expect(parseTrustProxy(raw)).toEqual(expected);
  });

  it.each(['true', '10.0.0.0/33', 'proxy.local', '1.2.3', '', '99'])('refuses %j', (raw) => {
    expect(parseTrustProxy(raw)).toBeUndefined();
  });

  it('turns a hop count into "trust the nearest N hops"', () => {
    const trust = toFastifyTrustProxy(1);
    if (typeof trust !== 'function') throw new Error('expected a function');
    expect(trust('198.51.100.1', 0)).toBe(true);
    expect(trust('198.51.100.2', 1)).toBe(false);
  });
});
