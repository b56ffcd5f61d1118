import { QUALIFICATIONS, type Qualification } from '@lead-capture/contracts';
import type { Collection } from '@lead-capture/docstore';
import { badRequest, type Clock, uniqueBy } from '@lead-capture/kit';
import type { NotificationSettings } from './schemas.js';

export const SETTINGS_COLLECTION = 'notification_settings';
export const MAX_RECIPIENTS = 50;
export const MAX_SOURCE_IDS = 100;

/** Who gets an e-mail about which scored leads (its type derived from its schema). One document for the workspace. */
export type { NotificationSettings };

export const DEFAULT_SETTINGS: Readonly<NotificationSettings> = Object.freeze({
  enabled: false,
  recipients: [],
  qualifications: ['hot'] satisfies Qualification[],
});

export type SettingsDocument = { _id: string; updatedAt: string; updatedBy: string } & NotificationSettings;

const SETTINGS_ID = 'workspace';

/**
 * Settings as sent by a client (the JSON schema has checked types, e-mail and UUID formats and
 * sizes): recipients de-duplicated case-insensitively (the first spelling kept), qualifications and
 * source ids de-duplicated. Enabled settings must name at least one recipient and one qualification.
 */
export function normaliseSettings(input: NotificationSettings): NotificationSettings {
  const recipients = uniqueBy(input.recipients, (address) => address.toLowerCase());
  const qualifications = uniqueBy(input.qualifications, (value) => value);
  if (input.enabled && recipients.length === 0) {
    throw badRequest('recipients must not be empty when notifications are enabled');
  }
  if (input.enabled && qualifications.length === 0) {
    throw badRequest(
      `qualifications must not be empty when notifications are enabled; choose from ${QUALIFICATIONS.join(', ')}`,
    );
  }
  const settings: NotificationSettings = { enabled: input.enabled, recipients, qualifications };
  if (input.sourceIds !== undefined) {
    settings.sourceIds = uniqueBy(
      input.sourceIds.map((id) => id.toLowerCase()),
      (id) => id,
    );
  }
  return settings;
}

/** `notification_settings`: the one settings document; the defaults until someone saves. */
export class SettingsStore {
  constructor(
    private readonly collection: Collection<SettingsDocument>,
    private readonly now: Clock,
  ) {}

  async get(): Promise<NotificationSettings> {
    const stored = await this.collection.findOne({ _id: SETTINGS_ID });
    if (!stored) return { ...DEFAULT_SETTINGS, qualifications: [...DEFAULT_SETTINGS.qualifications] };
    return settingsOf(stored);
  }

  async replace(settings: NotificationSettings, updatedBy: string): Promise<NotificationSettings> {
    const document: SettingsDocument = {
      _id: SETTINGS_ID,
      ...settings,
      updatedAt: this.now().toISOString(),
      updatedBy,
    };
    await this.collection.replaceOne({ _id: SETTINGS_ID }, document, { upsert: true });
    return settingsOf(document);
  }
}

function settingsOf(document: SettingsDocument): NotificationSettings {
  const settings: NotificationSettings = {
    enabled: document.enabled,
    recipients: document.recipients,
    qualifications: document.qualifications,
  };
  if (document.sourceIds !== undefined) settings.sourceIds = document.sourceIds;
  return settings;
}
