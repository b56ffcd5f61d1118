/**
 * `pnpm readme:config`: rewrites the configuration table in README.md from the config specs the
 * code actually reads (services/embedded/src/config-catalog.ts).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  README_CONFIG_END,
  README_CONFIG_START,
  renderConfigTable,
} from '../services/embedded/src/config-catalog.js';

const readmePath = join(import.meta.dirname, '..', 'README.md');
const readme = await readFile(readmePath, 'utf8');
const start = readme.indexOf(README_CONFIG_START);
const end = readme.indexOf(README_CONFIG_END);
if (start === -1 || end < start) {
  console.error(`README.md has no ${README_CONFIG_START} ... ${README_CONFIG_END} section`);
  process.exit(1);
}
const updated = `${readme.slice(0, start + README_CONFIG_START.length)}\n${renderConfigTable()}\n${readme.slice(end)}`;
await writeFile(readmePath, updated);
console.log(
  updated === readme
    ? 'README.md configuration table already up to date'
    : 'README.md configuration table updated',
);
