import type { DocStore } from '@lead-capture/docstore';
import type { Logger, OutboxEntry } from '@lead-capture/kit';
import { COLLECTIONS, type LegacyOutboxFields, type SubmissionDoc } from '../collections.js';

/**
 * Moves the lead.received events that an earlier version kept on unpublished submissions into the
 * outbox, where the relay publishes them. Idempotent (keyed by event id); a no-op once done.
 */
export async function upgradeLegacyOutbox(
  store: DocStore,
  retentionMs: number,
  logger: Logger,
): Promise<void> {
  const submissions = store.collection<SubmissionDoc & LegacyOutboxFields>(COLLECTIONS.submissions);
  const entries = store.collection<OutboxEntry>(COLLECTIONS.outbox);
  const legacy = await submissions.find({ outbox: true });
  for (const submission of legacy) {
    if (submission.event) {
      await entries.replaceOne(
        { _id: submission.event.id },
        {
          _id: submission.event.id,
          stream: submission._id,
          position: submission.receivedAt.getTime() * 1000,
          envelope: submission.event,
          attempts: 0,
          nextAttemptAt: new Date(),
        },
        { upsert: true },
      );
    }
    await submissions.updateOne(
      { _id: submission._id },
      {
        $set: { expiresAt: new Date(submission.receivedAt.getTime() + retentionMs) },
        $unset: { outbox: '', event: '', nextAttemptAt: '', publishAttempts: '', claimed: '', published: '' },
      },
    );
  }
  if (legacy.length > 0) logger.info({ moved: legacy.length }, 'Unpublished submissions moved to the outbox');
}
