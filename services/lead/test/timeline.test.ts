import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '@lead-capture/contracts';
import { type DocStore, openStore } from '@lead-capture/docstore';
import { systemClock } from '@lead-capture/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TimelineDoc } from '../src/store.js';
import { moveTimeline, recordTimeline, type TimelineEntry } from '../src/timeline.js';

let dataDir: string;
let store: DocStore;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'lead-timeline-'));
  store = await openStore(undefined, { dataDir });
});
afterAll(async () => {
  await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** A timeline collection of its own, without any index: only the entries' ids keep them apart. */
function bareTimeline() {
  return store.collection<TimelineDoc>(`timeline_${newId().replaceAll('-', '')}`);
}

function scored(leadId: string, causeId: string): TimelineEntry {
  return { leadId, type: 'scored', causeId, actor: { service: 'scoring' }, data: { score: 72 } };
}

describe('timeline entries keyed by lead, cause and type', () => {
  it('stores an entry written twice (a redelivered event) once, without a unique index', async () => {
    const timeline = bareTimeline();
    const leadId = newId();
    const causeId = newId();
    await recordTimeline(timeline, systemClock, scored(leadId, causeId));
    await recordTimeline(timeline, systemClock, scored(leadId, causeId));
    await recordTimeline(timeline, systemClock, { ...scored(leadId, causeId), type: 'enriched' });
    await recordTimeline(timeline, systemClock, scored(newId(), causeId));
    expect(await timeline.countDocuments({ leadId })).toBe(2);
    expect(await timeline.countDocuments({})).toBe(3);
  });

  it('writes entries without a cause every time', async () => {
    const timeline = bareTimeline();
    const leadId = newId();
    const note = { leadId, type: 'note_changed', actor: null, data: {} } as const;
    await recordTimeline(timeline, systemClock, note);
    await recordTimeline(timeline, systemClock, note);
    expect(await timeline.countDocuments({ leadId })).toBe(2);
  });

  it("keeps a merged lead's entry once on the primary when its event is delivered again", async () => {
    const timeline = bareTimeline();
    const [primary, duplicate, causeId] = [newId(), newId(), newId()];
    await recordTimeline(timeline, systemClock, scored(duplicate, causeId));
    await moveTimeline(timeline, duplicate, primary);
    await recordTimeline(timeline, systemClock, scored(primary, causeId));
    expect(await timeline.countDocuments({ leadId: duplicate })).toBe(0);
    expect(await timeline.countDocuments({ leadId: primary })).toBe(1);
  });

  it('drops a moved entry the primary already has for the same cause', async () => {
    const timeline = bareTimeline();
    const [primary, duplicate, causeId] = [newId(), newId(), newId()];
    await recordTimeline(timeline, systemClock, scored(primary, causeId));
    await recordTimeline(timeline, systemClock, scored(duplicate, causeId));
    await recordTimeline(timeline, systemClock, { ...scored(duplicate, newId()), type: 'enriched' });
    await moveTimeline(timeline, duplicate, primary);
    const moved = await timeline.find({ leadId: primary }, { sort: { position: 1 } });
    expect(moved.map((entry) => entry.type)).toEqual(['scored', 'enriched']);
    expect(await timeline.countDocuments({})).toBe(2);
  });
});
