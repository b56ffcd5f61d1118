import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  hostOf,
  type ResolvedAddress,
  resolveAll,
  resolveTarget,
  type TargetPolicy,
  urlProblem,
} from './target.js';

/** Bytes of an answer kept in the attempt log. */
export const RESPONSE_EXCERPT_BYTES = 1024;
/** Bytes of an answer read at most; the connection is closed past it. */
export const RESPONSE_READ_LIMIT_BYTES = 64 * 1024;

export interface OutgoingRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What came of one attempt: an HTTP answer (any status), or an error before one was complete. */
export interface SendOutcome {
  /** The HTTP status; null when there was no (complete) answer. */
  status: number | null;
  /** Retry-After of the answer, in seconds from now (a delay or an HTTP date). */
  retryAfterSeconds: number | null;
  /** The first bytes of the answer's body, as text. */
  responseExcerpt: string | null;
  /** What went wrong when there is no status, or why the status does not count as delivered. */
  error: string | null;
  /** The target was refused (scheme, address): sending again cannot help. */
  refused: boolean;
  durationMs: number;
}

export interface SenderOptions extends TargetPolicy {
  timeoutMs: number;
  /** The resolver (tests point a name at 127.0.0.1); default resolveAll, the system's DNS servers. */
  resolve?: (host: string) => Promise<ResolvedAddress[]>;
  /** A monotonic clock in ms for the duration; default performance.now. */
  elapsed?: () => number;
}

const USER_AGENT = 'LeadCapture-Webhooks/1.0';

/**
 * Sends one signed POST, safely: the URL is checked again (the policy may have changed since it was
 * saved), the host is resolved and every address checked, and the connection goes to the checked
 * address (the TLS name stays the host's). Redirects are not followed (a 3xx is a failed attempt);
 * the whole attempt has `timeoutMs`; at most RESPONSE_READ_LIMIT_BYTES of the answer are read.
 * Never throws: every failure is an outcome.
 */
export async function sendWebhook(request: OutgoingRequest, options: SenderOptions): Promise<SendOutcome> {
  const elapsed = options.elapsed ?? (() => performance.now());
  const started = elapsed();
  const fail = (error: string, refused = false): SendOutcome => ({
    status: null,
    retryAfterSeconds: null,
    responseExcerpt: null,
    error,
    refused,
    durationMs: Math.round(elapsed() - started),
  });

  const problem = urlProblem(request.url, options);
  if (problem) return fail(`Refused: ${problem}`, true);
  const url = new URL(request.url);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  let target: ResolvedAddress;
  try {
    const resolve =
      options.resolve ??
      ((host: string) => resolveAll(host, { timeoutMs: options.timeoutMs, signal: deadline }));
    target = await raceDeadline(resolveTarget(hostOf(url), options, resolve), deadline);
  } catch (error) {
    if (error instanceof Error && error.name === 'TargetRefusedError')
      return fail(`Refused: ${error.message}`, true);
    return fail(`Could not resolve ${hostOf(url)}: ${messageOf(error)}`);
  }

  // The connection goes to the address checked above, whatever a second lookup would say.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;

  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', onTimeout);
      resolve(outcome);
    };
    const outgoing = send(url, {
      method: 'POST',
      lookup: pinned,
      agent: false,
      headers: {
        ...request.headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(request.body)),
        'user-agent': USER_AGENT,
      },
    });
    const onTimeout = () => {
      outgoing.destroy();
      finish(fail(`Timed out after ${options.timeoutMs} ms`));
    };
    deadline.addEventListener('abort', onTimeout, { once: true });
    outgoing.on('error', (error) => finish(fail(messageOf(error))));
    outgoing.on('response', (response) => {
      readExcerpt(response).then(
        (excerpt) => {
          const status = response.statusCode ?? 0;
          let error: string | null = null;
          if (status >= 300 && status < 400) {
            error = `Redirect (${status}) not followed${response.headers.location ? ` to ${response.headers.location}` : ''}`;
          } else if (status < 200 || status >= 300) {
            error = `HTTP ${status}`;
          }
          finish({
            status,
            retryAfterSeconds: retryAfterOf(response.headers['retry-after']),
            responseExcerpt: excerpt,
            error,
            refused: false,
            durationMs: Math.round(elapsed() - started),
          });
        },
        (error: unknown) => finish(fail(messageOf(error))),
      );
    });
    outgoing.end(request.body);
  });
}

/** Reads up to RESPONSE_READ_LIMIT_BYTES, then closes; the first RESPONSE_EXCERPT_BYTES as text. */
function readExcerpt(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let read = 0;
    const done = () => resolve(Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'));
    response.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read - chunk.length < RESPONSE_EXCERPT_BYTES) chunks.push(chunk);
      if (read >= RESPONSE_READ_LIMIT_BYTES) {
        response.destroy();
        done();
      }
    });
    response.on('end', done);
    response.on('error', reject);
  });
}

/** Retry-After as seconds from now: a number of seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterOf(header: string | string[] | undefined, now = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

function raceDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error('timed out'));
    if (deadline.aborted) onAbort();
    deadline.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', onAbort));
  });
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
