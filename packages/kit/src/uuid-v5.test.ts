import { describe, expect, it } from 'vitest';
import { uuidV5 } from './uuid-v5.js';

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
