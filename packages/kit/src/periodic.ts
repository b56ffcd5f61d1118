import type { Logger } from 'pino';

export interface PeriodicTask {
  /** Runs a pass now rather than at the next tick; if one is under way, another follows it at once. */
  wake(): void;
  /** Stops scheduling and waits for the pass under way, if any. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` every `intervalMs` (outbox relays, schedulers, sweeps), and at once on `wake()`.
 * Passes never overlap: the next one is scheduled when the previous one settles. A failing pass is
 * logged and the next one runs on time. The timer does not keep the process alive.
 */
export function startPeriodicTask(options: {
  name: string;
  intervalMs: number;
  logger: Pick<Logger, 'error'>;
  pass: () => Promise<unknown>;
  /** Called after each pass has ended, failed or not (tests wait on it instead of sleeping). */
  onPassEnd?: () => void;
}): PeriodicTask {
  const { name, intervalMs, logger, pass, onPassEnd } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  /** A wake() came while a pass ran: the next pass follows it without waiting for the timer. */
  let again = false;

  const runNow = () => {
    clearTimeout(timer);
    again = false;
    running = pass()
      .then(() => undefined)
      .catch((error: unknown) => logger.error({ err: error, task: name }, `${name} failed`))
      .finally(() => {
        running = undefined;
        onPassEnd?.();
        if (again && !stopped) runNow();
        else schedule();
      });
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(runNow, intervalMs);
    timer.unref();
  };
  schedule();

  return {
    wake() {
      if (stopped) return;
      if (running) again = true;
      else runNow();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
