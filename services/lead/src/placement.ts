import type { LeadCollections, PipelineDoc } from './store.js';

export interface Placement {
  pipelineId: string | null;
  stageId: string | null;
}

export const UNPLACED: Placement = { pipelineId: null, stageId: null };

/** The first stage (lowest order) of a pipeline, or no stage when it has none. */
export function firstStageOf(pipeline: PipelineDoc): Placement {
  const [first] = [...pipeline.stages].sort((a, b) => a.order - b.order);
  return { pipelineId: pipeline._id, stageId: first?.id ?? null };
}

/** Where a new lead goes: the default pipeline's first stage, or nowhere while none is known. */
export async function defaultPlacement({
  pipelines,
}: Pick<LeadCollections, 'pipelines'>): Promise<Placement> {
  const pipeline = await pipelines.findOne({ isDefault: true, deleted: false });
  return pipeline ? firstStageOf(pipeline) : UNPLACED;
}
