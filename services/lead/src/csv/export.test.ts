import { describe, expect, it } from 'vitest';
import { neutraliseFormula } from './export.js';

describe('neutraliseFormula', () => {
  it.each(['=1+1', '+cmd|calc', '-2+3', '@SUM(A1)', '\tx', '\rx'])('prefixes %j with a quote', (value) => {
    expect(neutraliseFormula(value)).toBe(`'${value}`);
  });

  it('leaves other text alone', () => {
    expect(neutraliseFormula('Acme = best')).toBe('Acme = best');
    expect(neutraliseFormula('')).toBe('');
  });
});
