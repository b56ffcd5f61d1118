import type { FieldMappings, SourceReceiving } from '@lead-capture/contracts';
import type { InternalClient } from '@lead-capture/kit';

/** The source as the intake's token read model holds it. */
/** Secrets travel here (service to service), never in an answer to a client. */
export interface IntakeSourceState extends Required<SourceReceiving> {
  sourceId: string;
  name: string;
  webhookToken: string;
  fieldMappings: FieldMappings;
  revision: number;
}

export type SyncResult = { ok: true } | { ok: false; reason: string };

const sourcePath = (sourceId: string) => `/internal/intake/sources/${encodeURIComponent(sourceId)}`;

/**
 * Applies a source change to the intake's read model before the public request answers, so a rotated
 * or deleted token stops working at once (the events reach the intake too, a moment later; the
 * revision lets it ignore whichever arrives second). Never throws: the caller decides what a failure means.
 */
export class IntakeSync {
  constructor(private readonly internal: InternalClient) {}

  put(state: IntakeSourceState): Promise<SyncResult> {
    return this.call({ method: 'PUT', path: sourcePath(state.sourceId), body: state });
  }

  remove(sourceId: string, revision: number): Promise<SyncResult> {
    return this.call({ method: 'DELETE', path: sourcePath(sourceId), body: { revision } });
  }

  private async call(request: Parameters<InternalClient['request']>[1]): Promise<SyncResult> {
    try {
      const response = await this.internal.request('intake', request);
      if (response.status >= 200 && response.status < 300) return { ok: true };
      return { ok: false, reason: `the intake answered ${response.status}` };
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
  }
}
