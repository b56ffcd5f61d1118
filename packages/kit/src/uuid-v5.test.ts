import { randomUUID } from 'node:crypto';
import { v5 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { uuidV5 } from './uuid-v5.js';

describe('uuidV5', () => {
  it('derives exactly the ids the uuid package does (ids already published must not change)', () => {
    const namespaces = [randomUUID(), '6ba7b810-9dad-11d1-80b4-00c04fd430c8', randomUUID().toUpperCase()];
    const names = ['', 'lead.enrolled:abc', 'ünïcødé ✓ 😀', randomUUID(), 'x'.repeat(1000)];
    for (const namespace of namespaces) {
      for (const name of names) expect(uuidV5(name, namespace)).toBe(v5(name, namespace));
    }
    for (let i = 0; i < 200; i++) {
      const namespace = randomUUID();
      const name = `${randomUUID()}:${i}`;
      expect(uuidV5(name, namespace)).toBe(v5(name, namespace));
    }
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => uuidV5('name', 'not-a-uuid')).toThrow(TypeError);
  });
});
