import type { MappingTarget, SourceFormat } from '@lead-capture/contracts';
import { type MappedSubmission, mapSubmission } from './map-submission.js';

/** For the formats-*.test.ts files: the submission `payload` maps to, failing the test if it is refused. */
export function mapped(
  format: SourceFormat,
  payload: unknown,
  mappings: Record<string, MappingTarget> = {},
): MappedSubmission {
  const result = mapSubmission(payload, mappings, format);
  if (!result.ok) throw new Error(`expected a mapped submission, got: ${result.error}`);
  return result.submission;
}
