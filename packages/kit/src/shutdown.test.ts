import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from './logger.js';
import { createShutdown } from './shutdown.js';

const logger = createLogger({ level: 'silent', name: 'test' });

function setup(timeoutMs = 1000) {
  const exit = vi.fn<(code: number) => void>();
  const calls: string[] = [];
  const shutdown = createShutdown({ logger, timeoutMs, exit });
  /** A hook that records its name once done, `turns` turns of the event loop after it started. */
  const hook =
    (name: string, turns = 0) =>
    async () => {
      await laterBy(turns);
      calls.push(name);
    };
  return { shutdown, exit, calls, hook };
}

/** Resolves after `turns` turns of the event loop: work that takes a while, without a clock. */
async function laterBy(turns: number): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe('createShutdown', () => {
  it('runs the phases in order, whatever the registration order', async () => {
    const { shutdown, calls, hook } = setup();
    shutdown.register('store', 'close-clients', hook('store'));
    shutdown.register('consumers', 'drain', hook('drain consumers', 5));
    shutdown.register('http', 'stop-accepting', hook('http', 5));
    shutdown.register('bus', 'close-clients', hook('bus'));
    shutdown.register('scheduler', 'stop-accepting', hook('scheduler'));
    await shutdown.run('test');
    expect(calls.slice(0, 2).sort()).toEqual(['http', 'scheduler']);
    expect(calls[2]).toBe('drain consumers');
    expect(calls.slice(3).sort()).toEqual(['bus', 'store']);
  });

  it('logs a failing hook and still runs the rest', async () => {
    const { shutdown, calls, hook } = setup();
    shutdown.register('http', 'stop-accepting', async () => {
      throw new Error('already closed');
    });
    shutdown.register('bus', 'close-clients', hook('bus'));
    shutdown.register('store', 'close-clients', () => {
      throw new Error('sync failure');
    });
    const result = await shutdown.run('test');
    expect(calls).toEqual(['bus']);
    expect(result.failed.sort()).toEqual(['http', 'store']);
  });

  it('is idempotent: a second run returns the first and runs nothing twice', async () => {
    const { shutdown, calls, hook } = setup();
    shutdown.register('store', 'close-clients', hook('store', 2));
    const first = shutdown.run('SIGTERM');
    const second = shutdown.run('SIGINT');
    expect(second).toBe(first);
    expect((await second).reason).toBe('SIGTERM');
    await shutdown.run('again');
    expect(calls).toEqual(['store']);
  });

  it('reports that shutdown has started from the first call on', async () => {
    const { shutdown } = setup();
    expect(shutdown.isShuttingDown()).toBe(false);
    const running = shutdown.run('test');
    expect(shutdown.isShuttingDown()).toBe(true);
    await running;
  });

  it('ignores hooks registered after shutdown started', async () => {
    const { shutdown, calls, hook } = setup();
    await shutdown.run('test');
    shutdown.register('late', 'drain', hook('late'));
    await shutdown.run('test');
    expect(calls).toEqual([]);
  });

  it('exits with status 1 when the whole shutdown exceeds the timeout', async () => {
    vi.useFakeTimers();
    try {
      const { shutdown, exit } = setup(50);
      shutdown.register('stuck', 'drain', () => new Promise(() => {}));
      void shutdown.run('test');
      await vi.advanceTimersByTimeAsync(49);
      expect(exit).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(exit).toHaveBeenCalledWith(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not exit on its own when it finishes in time', async () => {
    // Fake timers: well past the 50 ms deadline without waiting for it, so the deadline timer, had
    // it been left armed, would have fired.
    vi.useFakeTimers();
    try {
      const { shutdown, exit } = setup(50);
      await shutdown.run('test');
      await vi.advanceTimersByTimeAsync(10_000);
      expect(exit).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('installSignalHandlers', () => {
  it('runs the shutdown on SIGTERM and exits 0 when every hook succeeded', async () => {
    const { shutdown, exit, calls, hook } = setup();
    const signals = new EventEmitter();
    shutdown.register('store', 'close-clients', hook('store'));
    shutdown.installSignalHandlers(signals);
    signals.emit('SIGTERM');
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(0));
    expect(calls).toEqual(['store']);
  });

  it('exits 1 when a hook failed', async () => {
    const { shutdown, exit } = setup();
    const signals = new EventEmitter();
    shutdown.register('store', 'close-clients', () => Promise.reject(new Error('nope')));
    shutdown.installSignalHandlers(signals);
    signals.emit('SIGINT');
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(1));
  });

  it('exits at once on a second signal', async () => {
    const { shutdown, exit } = setup();
    const signals = new EventEmitter();
    shutdown.register('slow', 'drain', () => new Promise(() => {}));
    shutdown.installSignalHandlers(signals);
    signals.emit('SIGINT');
    signals.emit('SIGINT');
    expect(exit).toHaveBeenCalledWith(1);
  });

  it('can be removed', () => {
    const { shutdown } = setup();
    const signals = new EventEmitter();
    const remove = shutdown.installSignalHandlers(signals);
    expect(signals.listenerCount('SIGTERM')).toBe(1);
    remove();
    expect(signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT')).toBe(0);
  });
});
