import type { Collection } from '@lead-capture/docstore';
import { type Clock, type Lease, LeasedJobs, type Logger, redactUrl } from '@lead-capture/kit';
import type { SubmissionDoc } from '../collections.js';
import type { SourceDirectory } from '../sources/directory.js';
import type { SubmissionIntake } from './intake.js';

export interface LeadgenFetcherOptions {
  submissions: Collection<SubmissionDoc>;
  sources: SourceDirectory;
  intake: SubmissionIntake;
  logger: Logger;
  /** META_GRAPH_API_URL, e.g. https://graph.facebook.com/v21.0 */
  graphApiUrl: string;
  intervalMs: number;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  now: Clock;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
}

/** Graph API error messages kept in the log are cut here. */
const MAX_REASON_LENGTH = 500;
/**
 * Graph API error codes that mean "try again later" (rate limits, temporary outages), whatever the
 * status. https://developers.facebook.com/docs/graph-api/guides/error-handling/
 */
const TRANSIENT_GRAPH_CODES = new Set([1, 2, 4, 17, 32, 341, 613, 80001, 80004]);

type Attempt = { ok: true; lead: unknown } | { ok: false; reason: string; retry: boolean };

/**
 * Fetches the leads that Meta leadgen notifications named (submissions with outcome `fetching`)
 * from the Graph API with the source's graphAccessToken, then hands each to the intake, which maps
 * it and publishes its lead.received through its outbox. All state is in the store (nextAttemptAt,
 * the attempts, the last error), so a restart resumes where it stopped and replicas share the work:
 * each claims one due submission at a time by pushing its nextAttemptAt past the fetch timeout.
 * Failures back off exponentially until the submission's giveUpAt, then it is `fetch_failed`.
 * The access token is in the URL Meta expects; only the redacted URL is ever logged.
 */
export class LeadgenFetcher {
  private readonly jobs: LeasedJobs<SubmissionDoc>;

  constructor(private readonly options: LeadgenFetcherOptions) {
    // A claim is held until the fetch can no longer be running; a crashed holder's runs out by itself.
    this.jobs = new LeasedJobs(
      { ...options, leaseMs: options.timeoutMs * 2 },
      {
        name: 'leadgen fetch pass',
        claim: (lease) => this.claimDue(lease),
        run: (submission) => this.attempt(submission),
        onFailure: (submission, error) => {
          // Due again once its lease has run out; the others go on now.
          options.logger.error(
            { err: error, sourceId: submission.sourceId, submissionId: submission._id },
            'Leadgen fetch failed unexpectedly',
          );
        },
      },
    );
  }

  async createIndexes(): Promise<void> {
    await this.options.submissions.createIndex({ outcome: 1, nextAttemptAt: 1 });
  }

  start(): void {
    this.jobs.start();
  }

  async stop(): Promise<void> {
    await this.jobs.stop();
  }

  private now(): Date {
    return this.options.now();
  }

  private claimDue(lease: Lease): Promise<SubmissionDoc | null> {
    return this.options.submissions.findOneAndUpdate(
      { outcome: 'fetching', nextAttemptAt: { $lte: lease.now } },
      { $set: { nextAttemptAt: lease.until, leaseOwner: lease.owner } },
      { sort: { nextAttemptAt: 1 } },
    );
  }

  private async attempt(submission: SubmissionDoc): Promise<void> {
    const { sources, intake, logger } = this.options;
    const state = submission.leadgen!;
    const context = {
      sourceId: submission.sourceId,
      submissionId: submission._id,
      leadgenId: state.leadgenId,
    };
    const source = await sources.findById(submission.sourceId);
    if (!source) {
      await this.settle(submission, { ok: false, reason: 'The source was deleted', retry: false });
      return;
    }
    const outcome: Attempt = source.graphAccessToken
      ? await this.fetchLead(state.leadgenId, source.graphAccessToken)
      : {
          ok: false,
          reason: 'The source has no graphAccessToken; set one (PUT /api/sources/<id>) to fetch its leads',
          retry: true,
        };
    if (outcome.ok) {
      if (await intake.completeLeadgen(submission, source, outcome.lead, this.jobs.owner)) {
        logger.info(context, 'Leadgen lead fetched from the Graph API');
      }
      return;
    }
    await this.settle(submission, outcome);
  }

  private async fetchLead(leadgenId: string, accessToken: string): Promise<Attempt> {
    const base = this.options.graphApiUrl.replace(/\/+$/, '');
    const url = `${base}/${encodeURIComponent(leadgenId)}?access_token=${encodeURIComponent(accessToken)}`;
    const scrub = (text: string) => text.replaceAll(accessToken, '[REDACTED]').slice(0, MAX_REASON_LENGTH);
    const fetchImpl = this.options.fetch ?? fetch;
    let response: Response;
    let body: unknown;
    try {
      response = await fetchImpl(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      body = await response.json().catch(() => undefined);
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      this.options.logger.warn({ url: redactUrl(url), reason: scrub(reason) }, 'Graph API unreachable');
      return { ok: false, reason: scrub(`Graph API unreachable (${reason})`), retry: true };
    }
    if (response.ok && isObject(body)) return { ok: true, lead: body };
    const graphError = isObject(body) && isObject(body.error) ? body.error : {};
    const message = typeof graphError.message === 'string' ? graphError.message : 'no error message';
    const code = typeof graphError.code === 'number' ? graphError.code : undefined;
    const transient =
      response.status >= 500 ||
      response.status === 429 ||
      graphError.is_transient === true ||
      (code !== undefined && TRANSIENT_GRAPH_CODES.has(code));
    const reason = response.ok
      ? 'Graph API answered 200 without a JSON lead'
      : `Graph API answered ${response.status}: ${message}${code === undefined ? '' : ` (code ${code})`}`;
    this.options.logger.warn(
      { url: redactUrl(url), status: response.status, code },
      'Graph API fetch failed',
    );
    return { ok: false, reason: scrub(reason), retry: transient };
  }

  /** Records a failed attempt: due again after the backoff, or fetch_failed (permanent, or past giveUpAt). */
  private async settle(submission: SubmissionDoc, failure: Extract<Attempt, { ok: false }>): Promise<void> {
    const now = this.now();
    const state = submission.leadgen!;
    const attempts = state.attempts + 1;
    const delay = Math.min(this.options.retryBaseMs * 2 ** (attempts - 1), this.options.retryMaxMs);
    const next = new Date(now.getTime() + delay);
    const retry = failure.retry && next < state.giveUpAt;
    const leadgen = { ...state, attempts, lastError: failure.reason, lastAttemptAt: now };
    const held = { _id: submission._id, outcome: 'fetching', leaseOwner: this.jobs.owner };
    if (retry) {
      await this.options.submissions.updateOne(held, { $set: { leadgen, nextAttemptAt: next } });
      return;
    }
    const error = failure.retry ? `Gave up after ${attempts} attempts: ${failure.reason}` : failure.reason;
    await this.options.submissions.updateOne(held, {
      $set: { leadgen, outcome: 'fetch_failed', error },
      $unset: { nextAttemptAt: '', leaseOwner: '' },
    });
    this.options.logger.warn(
      { sourceId: submission.sourceId, submissionId: submission._id, leadgenId: state.leadgenId, attempts },
      'Leadgen lead not fetched; given up',
    );
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
