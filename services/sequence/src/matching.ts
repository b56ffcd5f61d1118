import type { Qualification } from '@lead-capture/contracts';
import type { SequenceMatch } from './schemas.js';

export type { SequenceMatch };

export interface LeadFacts {
  qualification: Qualification;
  sourceId: string;
  score: number;
  tags: readonly string[];
}

export function matchesSequence(match: SequenceMatch, lead: LeadFacts): boolean {
  if (match.qualifications && !match.qualifications.includes(lead.qualification)) return false;
  if (match.sourceIds && !match.sourceIds.includes(lead.sourceId.toLowerCase())) return false;
  if (match.minScore !== undefined && lead.score < match.minScore) return false;
  if (match.tags) {
    const leadTags = new Set(lead.tags.map((tag) => tag.trim().toLowerCase()));
    if (!match.tags.every((tag) => leadTags.has(tag.toLowerCase()))) return false;
  }
  return true;
}
