import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NAME_SPLIT_RULES, SOURCE_FORMATS } from '@lead-capture/contracts';
import { describe, expect, it } from 'vitest';
import { SIGNATURE_SCHEMES } from '../src/routes/webhooks/signatures.js';

/** The READMEs a user reads to set up a sender: each names the formats the code knows, no more, no less. */
const readme = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8');

/** The backticked names of a list that starts with `generic` (`generic`, `typeform`, ... `formstack`). */
function listedFormats(text: string): string[][] {
  return [...text.matchAll(/`generic`(?:,\s*(?:and\s+)?`[^`]+`)+/g)].map((match) =>
    [...match[0].matchAll(/`([^`]+)`/g)].map((name) => name[1]!),
  );
}

/** The root README's sender table: format -> its cells. */
function senderTable(text: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const cells = line
      .trim()
      .split(' | ')
      .map((cell) => cell.replace(/^\|\s*|\s*\|$/g, ''));
    const format = /^`([a-z-]+)`$/.exec(cells[0] ?? '')?.[1];
    if (line.trim().startsWith('| `') && format !== undefined && cells.length === 5) rows.set(format, cells);
  }
  return rows;
}

describe("the formats the docs name are the code's", () => {
  it("the root README's sender table has one row per format, each naming the signature the intake checks", () => {
    const table = senderTable(readme('README.md'));
    expect([...table.keys()].sort()).toEqual([...SOURCE_FORMATS].sort());
    for (const format of SOURCE_FORMATS) {
      const header = /^[\w-]+/.exec(SIGNATURE_SCHEMES[format])![0];
      expect(table.get(format)![3], `${format}'s signature cell`).toContain(header);
    }
  });

  it.each(['services/source/README.md', 'services/intake/README.md'])('%s lists every format', (path) => {
    const lists = listedFormats(readme(path));
    expect(lists.length).toBeGreaterThan(0);
    for (const list of lists) expect([...list].sort()).toEqual([...SOURCE_FORMATS].sort());
  });

  it('the README and the source README name every nameSplit rule', () => {
    for (const path of ['README.md', 'services/source/README.md']) {
      for (const rule of NAME_SPLIT_RULES) expect(readme(path), path).toContain(`\`${rule}\``);
    }
  });
});
