import type { Collection } from '@lead-capture/docstore';
import type { PipelineDoc } from './store.js';

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

/**
 * Where a new lead goes: the default pipeline's first stage, or nowhere while none is known.
 *
 * With `cache`, what was read is kept until the pipelines change, which only `change` may do (the
 * directory handler's pipeline events). That is exact only where every change of the read model
 * goes through this instance: the embedded store, which one process opens and which holds one lead
 * service. Replicas on MongoDB each consume a share of the pipeline events, so one would keep the
 * placement of a pipeline another just deleted; there every capture reads the store.
 */
export class DefaultPlacement {
  #known: Placement | null = null;
  /** Bumped when a change starts and ends: a read begun before then is not kept. */
  #generation = 0;
  #changing = 0;

  constructor(
    private readonly pipelines: Collection<PipelineDoc>,
    private readonly options: { cache: boolean },
  ) {}

  async current(): Promise<Placement> {
    if (this.#known) return this.#known;
    const generation = this.#generation;
    const pipeline = await this.pipelines.findOne({ isDefault: true, deleted: false });
    const placement = pipeline ? firstStageOf(pipeline) : UNPLACED;
    if (this.options.cache && this.#changing === 0 && generation === this.#generation) {
      this.#known = placement;
    }
    return placement;
  }

  /**
   * Runs `work`, which changes the pipelines: while it runs every capture reads the store (as
   * without a cache), and what was kept before is forgotten.
   */
  async change<T>(work: () => Promise<T>): Promise<T> {
    this.#forget();
    this.#changing++;
    try {
      return await work();
    } finally {
      this.#changing--;
      this.#forget();
    }
  }

  #forget(): void {
    this.#known = null;
    this.#generation++;
  }
}
