import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { StoreLogger } from '../logger.js';

/**
 * Copies the WAL back into the database file on a thread of its own (SQLite's checkpoint), so the
 * event loop never waits for it. With SQLite's automatic checkpoint, the commit that crosses the WAL
 * limit copies every page and syncs the database file before it returns: on the lead chain that was
 * one commit in ten taking 10–25 ms, ~8 % of all CPU, on the main thread.
 *
 * The thread has its own connection and runs PASSIVE checkpoints, which never block the writer or
 * the readers. The writer asks for one after its commits (at most one under way). A background
 * checkpoint alone never lets the WAL start over, though: SQLite rewinds it only when a write begins
 * after a checkpoint copied every frame, and the writer's next write always begins first. So once an
 * answer finds the WAL above the writer's limit, the thread waits and the writer takes a turn
 * (`takeForegroundTurn`): a checkpoint of its own right after a commit, which copies only the frames
 * since the last background one and lets its next write rewind the WAL.
 */
export interface CheckpointCounts {
  /** Checkpoints the thread ran (failed ones not counted). */
  background: number;
  /** Checkpoints the writer took itself because the WAL outgrew its limit. */
  foreground: number;
}

export class Checkpointer {
  readonly #worker: Worker;
  readonly #logger: StoreLogger | undefined;
  #running = false;
  #again = false;
  #closed = false;
  #walFrames = 0;
  #limitFrames = Number.POSITIVE_INFINITY;
  #lastError = '';
  readonly #counts: CheckpointCounts = { background: 0, foreground: 0 };

  constructor(path: string, logger?: StoreLogger) {
    this.#logger = logger;
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, libsql: createRequire(import.meta.url).resolve('libsql') },
      // Its own output would go nowhere useful; errors come back as messages.
      stdout: false,
      stderr: false,
      // It only runs one pragma: a small heap keeps its share of the process's memory small.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    });
    this.#worker.unref();
    this.#worker.on('message', (message: CheckpointAnswer) => this.#answered(message));
    this.#worker.on('error', (error) => {
      this.#logger?.error({ err: error }, 'docstore checkpoint thread failed; the WAL grows until restart');
      this.#closed = true;
    });
  }

  /** Frames in the WAL after the last checkpoint (0 until one ran). */
  get walFrames(): number {
    return this.#walFrames;
  }

  /**
   * True when the writer should checkpoint itself now: the last answer found the WAL above
   * `limitFrames` frames and no background checkpoint is under way (they would exclude each other).
   * Once per answer; background checkpoints wait meanwhile (see request).
   */
  takeForegroundTurn(limitFrames: number): boolean {
    this.#limitFrames = limitFrames;
    if (this.#running || this.#walFrames <= limitFrames) return false;
    this.#walFrames = 0;
    this.#counts.foreground++;
    return true;
  }

  /** Asks for a checkpoint; one under way runs again when it ends, so the latest commit is covered. */
  request(): void {
    // The writer's turn comes first (takeForegroundTurn), at its next commit.
    if (this.#closed || this.#walFrames > this.#limitFrames) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    this.#worker.postMessage('checkpoint');
  }

  #answered(message: CheckpointAnswer): void {
    this.#running = false;
    if ('error' in message) {
      // Busy (an exclusive lock elsewhere) or I/O: logged once per distinct message, retried later.
      if (message.error !== this.#lastError) {
        this.#lastError = message.error;
        this.#logger?.warn({ reason: message.error }, 'docstore background checkpoint failed');
      }
    } else {
      this.#walFrames = message.walFrames;
      this.#counts.background++;
      this.#lastError = '';
    }
    if (this.#again) {
      this.#again = false;
      this.request();
    }
  }

  counts(): CheckpointCounts {
    return { ...this.#counts };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    // Referenced again while it closes: an awaited close must keep the process alive until it ends.
    this.#worker.ref();
    // A checkpoint under way finishes first: the thread reads 'close' after it.
    this.#worker.postMessage('close');
    await exited;
  }
}

type CheckpointAnswer = { walFrames: number } | { error: string };

/** Plain JavaScript (an eval'd worker needs no loader, under tsx, vitest and the build alike). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.libsql);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 1000');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ walFrames: Number(result.log) });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message ? error.message : error) });
  }
});
`;
