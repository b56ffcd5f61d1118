import { describe, expect, it } from 'vitest';
import { isUnderPrefix } from './table.js';

describe('isUnderPrefix', () => {
  it.each([
    ['/api/leads', '/api/leads', true],
    ['/api/leads/123/notes', '/api/leads', true],
    ['/api/leadsx', '/api/leads', false],
    ['/api', '/api/leads', false],
    ['/api/sources/abc/submissions', '/api/sources/:sourceId/submissions', true],
    ['/api/sources/abc/submissions/s1/replay', '/api/sources/:sourceId/submissions', true],
    ['/api/sources/{sourceId}/submissions', '/api/sources/:sourceId/submissions', true],
    ['/api/sources//submissions', '/api/sources/:sourceId/submissions', false],
    ['/api/sources/abc/regenerate-token', '/api/sources/:sourceId/submissions', false],
  ])('%s under %s: %s', (path, prefix, expected) => {
    expect(isUnderPrefix(path, prefix)).toBe(expected);
  });
});
