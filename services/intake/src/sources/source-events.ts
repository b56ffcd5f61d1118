import type { GroupEvent, SourceReceiving } from '@lead-capture/contracts';
import type { GroupHandlers } from '@lead-capture/kit';
import type { SourceChange, SourceDirectory } from './directory.js';

/**
 * The change a source.* event makes to the token read model. Events without a revision count as
 * revision 0: they fill in what is missing but never override anything held.
 */
export function sourceChangeOf(event: GroupEvent<'intake.source.sync'>): SourceChange {
  switch (event.type) {
    case 'source.created': {
      const { sourceId, revision = 0, name, fieldMappings, webhookToken } = event.data;
      return { sourceId, revision, name, fieldMappings, webhookToken, ...receivingOf(event.data) };
    }
    case 'source.updated': {
      const { sourceId, revision = 0, name, fieldMappings } = event.data;
      return { sourceId, revision, name, fieldMappings, ...receivingOf(event.data) };
    }
    case 'source.token_rotated': {
      const { sourceId, revision = 0, webhookToken } = event.data;
      return { sourceId, revision, webhookToken };
    }
    case 'source.deleted': {
      const { sourceId, revision = 0 } = event.data;
      return { sourceId, revision, deleted: true };
    }
  }
}

/** The format, name-split rule and secrets an event carries; absent ones leave what is held unchanged. */
function receivingOf(data: SourceReceiving): SourceReceiving {
  const { format, nameSplit, verifyToken, signingSecret, graphAccessToken } = data;
  return Object.fromEntries(
    Object.entries({ format, nameSplit, verifyToken, signingSecret, graphAccessToken }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}

/** Handler of the intake.source.sync group. Idempotent: applying a change twice changes nothing. */
export function sourceEventsHandler(directory: SourceDirectory): GroupHandlers<'intake.source.sync'> {
  const apply = async (event: GroupEvent<'intake.source.sync'>): Promise<void> => {
    await directory.apply(sourceChangeOf(event));
  };
  return {
    'source.created': apply,
    'source.updated': apply,
    'source.token_rotated': apply,
    'source.deleted': apply,
  };
}
