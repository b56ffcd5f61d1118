/** The shared set-up and helpers of the pipeline service's API tests (pipelines-*.test.ts). */

import { afterEach, expect } from 'vitest';
import { type PipelineHarness, startPipelineHarness } from './harness.js';

export interface Stage {
  id: string;
  name: string;
  color: string;
  order: number;
  isWin: boolean;
  isLost: boolean;
}

export interface Pipeline {
  id: string;
  name: string;
  isDefault: boolean;
  createdAt: string;
  stages: Stage[];
}

export const TWO_STAGES = [
  { name: 'Open', color: '#112233', order: 0 },
  { name: 'Closed', color: '#445566', order: 1, isWin: true },
];

/** The harness the helpers below talk to: the one the running test opened last. */
export let h: PipelineHarness;
/** The harnesses `open` started, closed after each test (`closeOpenedAfterEach`). */
export const opened: PipelineHarness[] = [];

export async function open(options?: Parameters<typeof startPipelineHarness>[0]): Promise<PipelineHarness> {
  const harness = await openUntracked(options);
  opened.push(harness);
  return harness;
}

/** Like `open`, for a harness the test closes itself. */
export async function openUntracked(
  options?: Parameters<typeof startPipelineHarness>[0],
): Promise<PipelineHarness> {
  h = await startPipelineHarness(options);
  return h;
}

export function closeOpenedAfterEach(): void {
  afterEach(async () => {
    for (const harness of opened.splice(0)) await harness.close();
  });
}

export async function createPipeline(body: Record<string, unknown> = {}): Promise<Pipeline> {
  const reply = await h.call('POST', '/api/pipelines', { name: 'Partners', stages: TWO_STAGES, ...body });
  expect(reply.status).toBe(201);
  return reply.body as Pipeline;
}

export async function get(id: string): Promise<Pipeline> {
  const reply = await h.call('GET', `/api/pipelines/${id}`);
  expect(reply.status).toBe(200);
  return reply.body as Pipeline;
}

export async function defaults(): Promise<string[]> {
  const list = (await h.call('GET', '/api/pipelines')).body as Pipeline[];
  return list.filter((pipeline) => pipeline.isDefault).map((pipeline) => pipeline.id);
}

/** The events of one pipeline, as type, revision and default flag. */
export function eventsOf(id: string) {
  return h.events
    .filter((event) => (event.data as { pipelineId: string }).pipelineId === id)
    .map(({ type, data }) => {
      const { revision, isDefault } = data as { revision: number; isDefault?: boolean };
      return isDefault === undefined ? { type, revision } : { type, revision, isDefault };
    });
}
