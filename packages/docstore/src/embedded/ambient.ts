import { AsyncLocalStorage } from 'node:async_hooks';
import type { Transaction } from '../types.js';
import type { TransactionScope } from './collection.js';

/**
 * A transaction the code it runs joins without being handed `tx` (DocStore.ambientTransaction), or
 * one of its savepoints. Nested savepoints of one frame run one after another (`turn`): SQLite's
 * savepoints are a stack, so two open at once in one transaction would release each other's.
 */
export interface AmbientFrame {
  readonly host: object;
  readonly scope: TransactionScope;
  readonly tx: Transaction;
  /** The savepoint opened last inside this frame settles before the next one opens. */
  turn: Promise<void>;
  /** Set: transactions opened inside run in place, and report a failure here (AmbientOptions). */
  readonly inlineNested?: (error: unknown) => void;
}

const frames = new AsyncLocalStorage<AmbientFrame>();

/** The open ambient transaction (or savepoint) of `host` the calling code runs in; null outside one. */
export function ambientFrame(host: object): AmbientFrame | null {
  const frame = frames.getStore();
  return frame && frame.host === host && frame.scope.open ? frame : null;
}

/** Runs `work` inside `frame`: the code it calls joins that transaction. */
export function runInFrame<T>(frame: AmbientFrame, work: () => T): T {
  return frames.run(frame, work);
}
