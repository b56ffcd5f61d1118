import type { Collection, DocStore } from '@lead-capture/docstore';
import { DEFAULT_MODEL, type ScoringModel, WEIGHT_KEYS } from './model.js';

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

  constructor(store: DocStore) {
    this.settings = store.collection<SettingsDoc>(SETTINGS_COLLECTION);
  }

  /**
   * Read on every lead (no cache), so every replica scores with the model saved last. A weight the
   * stored model lacks (added by a later version) has its default value.
   */
  async current(): Promise<ScoringModel> {
    const stored = await this.settings.findOne({ _id: 'model' });
    if (!stored) return structuredClone(DEFAULT_MODEL);
    const weights = { ...DEFAULT_MODEL.weights };
    for (const key of WEIGHT_KEYS) {
      if (typeof stored.weights[key] === 'number') weights[key] = stored.weights[key];
    }
    return { weights, thresholds: { ...stored.thresholds }, sourceWeights: { ...stored.sourceWeights } };
  }

  async replace(model: ScoringModel, updatedBy: string): Promise<ScoringModel> {
    const doc: SettingsDoc = { _id: 'model', ...model, updatedAt: new Date().toISOString(), updatedBy };
    await this.settings.replaceOne({ _id: 'model' }, doc, { upsert: true });
    return this.current();
  }
}
