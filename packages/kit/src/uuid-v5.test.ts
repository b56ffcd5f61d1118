import { newId } from '@lead-capture/contracts';
import { describe, expect, it } from 'vitest';
import { timeOrderedUuidV5, uuidV5 } from './uuid-v5.js';

/** RFC 4122's DNS namespace. */
const DNS = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';

describe('uuidV5', () => {
  it('derives the RFC 4122 version 5 id, the same on every call', () => {
    expect(uuidV5('www.example.com', DNS)).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    // The namespace is parsed once and kept: a second call with it gives the same id.
    expect(uuidV5('www.example.com', DNS)).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    expect(uuidV5('www.example.org', DNS)).not.toBe(uuidV5('www.example.com', DNS));
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => uuidV5('name', 'not-a-uuid')).toThrow(TypeError);
  });
});

describe('timeOrderedUuidV5', () => {
  const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('begins with the time of a v7 origin, then the v5 id of the name, marked version 8', () => {
    const origin = '0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b';
    const derived = timeOrderedUuidV5(`lead.notified:${origin}`, DNS, origin);
    const v5 = uuidV5(`lead.notified:${origin}`, DNS);
    expect(derived).toMatch(UUID_V8);
    expect(derived.slice(0, 13)).toBe(origin.slice(0, 13));
    expect(derived.slice(15)).toBe(v5.slice(15));
    expect(timeOrderedUuidV5(`lead.notified:${origin}`, DNS, origin)).toBe(derived);
    expect(timeOrderedUuidV5(`lead.enrolled:${origin}`, DNS, origin)).not.toBe(derived);
  });

  it('keeps the time along a chain of derived ids, so they sort as their origins do', () => {
    const origins = Array.from({ length: 2000 }, () => newId());
    const once = origins.map((origin) => timeOrderedUuidV5(origin, DNS, origin));
    const twice = once.map((id) => timeOrderedUuidV5(id, DNS, id));
    for (const [i, id] of twice.entries()) expect(id.slice(0, 13)).toBe(origins[i]!.slice(0, 13));
    expect(new Set(twice).size).toBe(origins.length);
  });

  it('is the plain v5 id when the origin carries no time (a v4 id, or not a UUID)', () => {
    for (const origin of ['2ed6657d-e927-468b-95e1-2665a8aea6a2', 'submission-7']) {
      expect(timeOrderedUuidV5(origin, DNS, origin)).toBe(uuidV5(origin, DNS));
    }
  });
});
