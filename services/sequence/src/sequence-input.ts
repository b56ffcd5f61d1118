import { badRequest } from '@lead-capture/kit';
import type { SequenceInput, SequenceMatch, SequenceStep } from './schemas.js';
import { PLACEHOLDERS, unknownPlaceholders } from './template.js';

export const MAX_NAME_LENGTH = 255;
export const MAX_STEPS = 20;
export const MAX_SUBJECT_LENGTH = 255;
export const MAX_BODY_LENGTH = 20_000;
export const MAX_TAG_LENGTH = 50;

export type { SequenceStep };

export type SequenceDefinition = {
  name: string;
  active: boolean;
  steps: SequenceStep[];
  match: SequenceMatch;
};

const PLACEHOLDER_HINT = `use ${PLACEHOLDERS.map((name) => `{{${name}}}`).join(', ')}, optionally with a default: {{firstName|there}}`;

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

/**
 * The sequence to store, or a 400 naming the first problem the schema cannot see: a blank name, an
 * unknown placeholder. Lists in `match` keep each value once (source ids in lower case, tags by
 * their first spelling, compared case-insensitively).
 */
export function parseSequenceInput(input: SequenceInput): SequenceDefinition {
  const name = input.name.trim();
  if (name === '') throw badRequest('name must not be empty');
  if ([...name].length > MAX_NAME_LENGTH) {
    throw badRequest(`name must be at most ${MAX_NAME_LENGTH} characters long`);
  }
  input.steps.forEach((step, index) => {
    for (const field of ['subject', 'body'] as const) {
      if (step[field].trim() === '') throw badRequest(`steps[${index}].${field} must not be blank`);
      const [unknown] = unknownPlaceholders(step[field]);
      if (unknown) {
        throw badRequest(
          `steps[${index}].${field} has an unknown placeholder ${unknown}; ${PLACEHOLDER_HINT}`,
        );
      }
    }
  });
  return {
    name,
    active: input.active ?? true,
    steps: input.steps.map(({ delayMinutes, subject, body }) => ({ delayMinutes, subject, body })),
    match: parseMatch(input.match ?? {}),
  };
}

function parseMatch(match: SequenceMatch): SequenceMatch {
  const parsed: SequenceMatch = {};
  if (match.qualifications) parsed.qualifications = unique(match.qualifications);
  if (match.sourceIds) parsed.sourceIds = unique(match.sourceIds.map((id) => id.toLowerCase()));
  if (match.minScore !== undefined) parsed.minScore = match.minScore;
  if (match.tags) {
    const tags = match.tags.map((tag) => tag.trim());
    const blank = tags.indexOf('');
    if (blank !== -1) throw badRequest(`match.tags[${blank}] must not be blank`);
    const seen = new Set<string>();
    parsed.tags = tags.filter((tag) => {
      const key = tag.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  return parsed;
}
