import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeConfig } from '@lead-capture/kit';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_SECTIONS,
  README_CONFIG_END,
  README_CONFIG_START,
  renderConfigTable,
} from '../src/config-catalog.js';

const readme = readFileSync(join(import.meta.dirname, '../../../README.md'), 'utf8');

describe('the README configuration table', () => {
  it('is exactly what the config specs declare (regenerate with pnpm readme:config)', () => {
    const start = readme.indexOf(README_CONFIG_START);
    const end = readme.indexOf(README_CONFIG_END);
    expect(start, 'README has the generated section').toBeGreaterThan(-1);
    const table = readme.slice(start + README_CONFIG_START.length, end).trim();
    expect(table).toBe(renderConfigTable());
  });

  it('has a row for every variable, with its default', () => {
    for (const spec of Object.values(CONFIG_SECTIONS)) {
      for (const variable of describeConfig(spec)) {
        const row = readme.split('\n').find((line) => line.startsWith(`| \`${variable.name}\` |`));
        expect(row, variable.name).toBeDefined();
        if (variable.default !== undefined) expect(row, variable.name).toContain(`| ${variable.default} |`);
      }
    }
  });
});
