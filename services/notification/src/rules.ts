import type { Qualification } from '@lead-capture/contracts';
import type { NotificationSettings } from './settings.js';

export interface ScoredLeadFacts {
  qualification: Qualification;
  sourceId: string;
}

/**
 * Whom to e-mail about a scored lead: every recipient when notifications are enabled, the lead's
 * qualification is one of those chosen, and the lead's source is listed (no list: every source).
 * Nobody otherwise.
 */
export function recipientsFor(settings: NotificationSettings, lead: ScoredLeadFacts): string[] {
  if (!settings.enabled) return [];
  if (!settings.qualifications.includes(lead.qualification)) return [];
  const { sourceIds } = settings;
  if (sourceIds && sourceIds.length > 0 && !sourceIds.includes(lead.sourceId.toLowerCase())) return [];
  return settings.recipients;
}
