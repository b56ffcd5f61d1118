import type { Collection, DocStore } from '@lead-capture/docstore';
import type { Clock } from '@lead-capture/kit';
import { DEFAULT_MODEL, MAX_POINTS, MIN_POINTS, type ScoringModel, WEIGHT_KEYS } from './model.js';

export const SETTINGS_COLLECTION = 'scoring_settings';

/** The one settings document: the model, and who changed it last. */
type SettingsDoc = ScoringModel & {
  _id: 'model';
  updatedAt: string;
  updatedBy: string;
};

/** The scoring model in force (`scoring_settings`): the default until someone saves one. */
export class ScoringSettings {
  private readonly settings: Collection<SettingsDoc>;

  constructor(
    store: DocStore,
    private readonly now: Clock,
  ) {
    this.settings = store.collection<SettingsDoc>(SETTINGS_COLLECTION);
  }

  /**
   * Read on every lead (no cache), so every replica scores with the model saved last. A weight the
   * stored model lacks (added by a later version) has its default value. What was stored is checked
   * again as it is read: a weight that is not a whole number of points in range (Infinity saved by an
   * older version, say) counts as its default, and thresholds that do not hold (`hot` above `warm`,
   * both 1-100) are the default ones, so no stored value can make every score invalid.
   */
  async current(): Promise<ScoringModel> {
    const stored = await this.settings.findOne({ _id: 'model' });
    if (!stored) return structuredClone(DEFAULT_MODEL);
    const weights = { ...DEFAULT_MODEL.weights };
    for (const key of WEIGHT_KEYS) {
      const weight = stored.weights?.[key];
      if (isPoints(weight)) weights[key] = weight;
    }
    const { hot, warm } = stored.thresholds ?? {};
    const thresholds =
      isThreshold(hot) && isThreshold(warm) && hot > warm ? { hot, warm } : { ...DEFAULT_MODEL.thresholds };
    const sourceWeights: Record<string, number> = {};
    for (const [sourceId, weight] of Object.entries(stored.sourceWeights ?? {})) {
      if (isPoints(weight)) sourceWeights[sourceId] = weight;
    }
    return { weights, thresholds, sourceWeights };
  }

  async replace(model: ScoringModel, updatedBy: string): Promise<ScoringModel> {
    const doc: SettingsDoc = { _id: 'model', ...model, updatedAt: this.now().toISOString(), updatedBy };
    await this.settings.replaceOne({ _id: 'model' }, doc, { upsert: true });
    return this.current();
  }
}

function isPoints(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= MIN_POINTS && (value as number) <= MAX_POINTS;
}

function isThreshold(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 100;
}
