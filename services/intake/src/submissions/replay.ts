import { mapSubmission } from '@lead-capture/capture';
import type { Collection } from '@lead-capture/docstore';
import { type Clock, conflict, type Logger, notFound, type Outbox } from '@lead-capture/kit';
import { COLLECTIONS, type SubmissionDoc, type SubmissionOutcome } from '../collections.js';
import { receivingOptions, type SourceDirectory } from '../sources/directory.js';
import { expiryOf, leadReceivedData, mappingRejection, storeUnavailable } from './delivery.js';
import type { LeadgenIntake } from './leadgen-intake.js';
import { REJECTED_PAYLOAD_EXCERPT_BYTES, STORED_PAYLOAD_MAX_BYTES } from './stored-payload.js';
import { activeSource } from './submission-list.js';

export interface SubmissionReplayOptions {
  submissions: Collection<SubmissionDoc>;
  sources: SourceDirectory;
  outbox: Outbox;
  logger: Logger;
  /** How long a settled submission stays in the log. */
  retentionMs: number;
  /** Fetches a leadgen lead again (a leadgen submission is replayed by fetching it). */
  leadgen: LeadgenIntake;
  now: Clock;
}

/**
 * Runs a stored submission again through the source's current mappings: a new lead.received
 * (origin 'replay', same submissionId, new event id) through the outbox, or 400 when it still fails.
 */
export async function replaySubmission(
  options: SubmissionReplayOptions,
  sourceId: string,
  submissionId: string,
): Promise<{ submissionId: string; outcome: SubmissionOutcome }> {
  const { submissions, sources, outbox, logger, retentionMs } = options;
  const source = await activeSource(sources, sourceId);
  const stored = await submissions.findOne({ _id: submissionId, sourceId });
  if (!stored) throw notFound('Submission not found');
  if (stored.outcome === 'duplicate_delivery') {
    throw conflict(`This delivery repeated submission ${stored.duplicateOf}; replay that one`);
  }
  if (stored.leadgen !== undefined && (stored.outcome === 'fetch_failed' || stored.outcome === 'fetching')) {
    return options.leadgen.refetch(stored);
  }
  if (stored.payload === null) throw conflict('This submission has no readable payload to replay');
  if (stored.payloadTruncated) {
    const kept = stored.outcome === 'rejected' ? REJECTED_PAYLOAD_EXCERPT_BYTES : STORED_PAYLOAD_MAX_BYTES;
    throw conflict(`Only the first ${kept} bytes of this payload were kept; the sender must send it again`);
  }
  const mapped = mapSubmission(JSON.parse(stored.payload), source.fieldMappings, receivingOptions(source));
  if (!mapped.ok) {
    await submissions.updateOne({ _id: submissionId }, { $set: { error: mapped.error } }).catch(() => {
      // The 400 below says it all; the log keeps the previous reason.
    });
    throw mappingRejection(mapped);
  }
  const meta = { ip: stored.ip, userAgent: stored.userAgent };
  const event = leadReceivedData(source, submissionId, stored.receivedAt, 'replay', mapped.submission, meta);
  try {
    await outbox.change(async (change) => {
      const envelope = await change.emit(submissionId, 'lead.received', event, {
        correlationId: submissionId,
      });
      await change.collection<SubmissionDoc>(COLLECTIONS.submissions).updateOne(
        { _id: submissionId },
        {
          $set: {
            outcome: 'accepted',
            eventId: envelope.id,
            expiresAt: expiryOf(options.now(), retentionMs),
          },
          $unset: { error: '' },
        },
      );
    });
  } catch (error) {
    logger.error({ err: error, submissionId }, 'Replay not stored; answering 503');
    throw storeUnavailable(error);
  }
  return { submissionId, outcome: 'accepted' };
}
