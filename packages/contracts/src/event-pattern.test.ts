import { describe, expect, it } from 'vitest';
import { matchesEventPattern as topicMatches } from './chain.js';

describe('topicMatches (RabbitMQ topic exchange semantics)', () => {
  it.each([
    ['lead.created', 'lead.created', true],
    ['lead.created', 'lead.updated', false],
    ['lead.*', 'lead.created', true],
    ['lead.*', 'lead', false],
    ['lead.*', 'lead.note.added', false],
    ['*.created', 'lead.created', true],
    ['*', 'lead', true],
    ['*', 'lead.created', false],
    ['lead.#', 'lead', true],
    ['lead.#', 'lead.created', true],
    ['lead.#', 'lead.note.added', true],
    ['lead.#', 'leads.created', false],
    ['#', 'anything.at.all', true],
    ['#', 'one', true],
    ['#.created', 'created', true],
    ['#.created', 'lead.note.created', true],
    ['#.created', 'lead.created.not', false],
    ['lead.#.added', 'lead.added', true],
    ['lead.#.added', 'lead.note.tag.added', true],
    ['lead.*.#', 'lead', false],
    ['lead.*.#', 'lead.x', true],
    ['lead.*.#', 'lead.x.y.z', true],
    ['#.#', 'a.b', true],
    ['*.*', 'a', false],
    ['lead.#.#.added', 'lead.added', true],
    ['a.*.*.d', 'a.b.c.d', true],
    ['a.*.*.d', 'a.b.d', false],
  ])('%s ~ %s -> %s', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});
