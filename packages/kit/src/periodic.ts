import type { Logger } from 'pino';

export interface PeriodicTask {
  /** Stops scheduling and waits for the pass under way, if any. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` every `intervalMs` (outbox relays, schedulers, sweeps). Passes never overlap: the next
 * one is scheduled when the previous one settles. A failing pass is logged and the next one runs on
 * time. The timer does not keep the process alive.
 */
export function startPeriodicTask(options: {
  name: string;
  intervalMs: number;
  logger: Pick<Logger, 'error'>;
  pass: () => Promise<unknown>;
}): PeriodicTask {
  const { name, intervalMs, logger, pass } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass()
        .then(() => undefined)
        .catch((error: unknown) => logger.error({ err: error, task: name }, `${name} failed`))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, intervalMs);
    timer.unref();
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
