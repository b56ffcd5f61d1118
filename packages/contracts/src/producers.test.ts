import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRODUCERS } from './chain.js';
import { EVENT_TYPES, isKnownEventType } from './events/index.js';

const servicesDir = join(import.meta.dirname, '../../../services');

/**
 * Event types a service's source names where it publishes: `publish('t'`, `emit(stream, 't'`,
 * `tryPublish('t'`, `createEnvelope('t'`, a wrapper's `change(id, 't'` / `emitState('t'`, or a stage's `nextType: 't'`.
 */
const PUBLISH_SITE =
  /\b(?:publish|emit|emitState|tryPublish|createEnvelope|change)\(\s*(?:[\w.$[\]]+\s*,\s*)?'([a-z_]+\.[a-z_]+)'|\bnextType:\s*'([a-z_]+\.[a-z_]+)'/g;

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
    }),
  );
  return files.flat();
}

async function publishedTypesByService(): Promise<Map<string, Set<string>>> {
  const found = new Map<string, Set<string>>();
  for (const service of await readdir(servicesDir)) {
    const types = new Set<string>();
    for (const file of await sourceFiles(join(servicesDir, service, 'src')).catch(() => [])) {
      for (const match of (await readFile(file, 'utf8')).matchAll(PUBLISH_SITE))
        types.add(match[1] ?? match[2]!);
    }
    found.set(service, types);
  }
  return found;
}

describe('the producers of the chain map', () => {
  it('names at least one producer for every event type', () => {
    for (const type of EVENT_TYPES) expect(PRODUCERS[type].length).toBeGreaterThan(0);
  });

  it('matches every publish in services/: each one by a declared producer, each producer publishing', async () => {
    const found = await publishedTypesByService();
    const undeclared: string[] = [];
    for (const [service, types] of found) {
      for (const type of types) {
        if (!isKnownEventType(type)) undeclared.push(`${service} publishes unknown ${type}`);
        else if (!(PRODUCERS[type] as readonly string[]).includes(service))
          undeclared.push(`${service} publishes ${type}`);
      }
    }
    expect(undeclared).toEqual([]);
    const silent = EVENT_TYPES.flatMap((type) =>
      PRODUCERS[type]
        .filter((service) => !found.get(service)?.has(type))
        .map((service) => `${service}: ${type}`),
    );
    expect(silent).toEqual([]);
  });
});
