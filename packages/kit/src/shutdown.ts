import type { Logger } from './logger.js';

/**
 * Shutdown phases, in order:
 * - 'stop-accepting': close the HTTP listener, cancel consumers, stop schedulers (no new work);
 * - 'drain': finish the work already in flight;
 * - 'close-clients': close the bus, the store, Redis.
 */
export const SHUTDOWN_PHASES = ['stop-accepting', 'drain', 'close-clients'] as const;
export type ShutdownPhase = (typeof SHUTDOWN_PHASES)[number];

export type ShutdownHook = () => Promise<void> | void;

export interface ShutdownResult {
  reason: string;
  /** Names of the hooks that threw (each was logged). */
  failed: string[];
}

export interface Shutdown {
  /** Registers a resource's close hook. Hooks of one phase run in parallel. */
  register(name: string, phase: ShutdownPhase, hook: ShutdownHook): void;
  /**
   * Runs every hook, phase by phase; a hook that fails is logged and the rest still run.
   * Idempotent: later calls return the first run's promise. Does not exit the process.
   */
  run(reason: string): Promise<ShutdownResult>;
  /** True from the moment run() is first called (readiness turns 503). */
  isShuttingDown(): boolean;
  /**
   * SIGTERM / SIGINT start run() and exit when it completes (0, or 1 if a hook failed); a second
   * signal exits at once. Returns a function that removes the handlers.
   */
  installSignalHandlers(signals?: NodeJS.EventEmitter): () => void;
}

export interface ShutdownOptions {
  logger: Logger;
  /** If the whole run takes longer, the process exits with status 1 anyway (SHUTDOWN_TIMEOUT_MS). */
  timeoutMs: number;
  /** How to end the process; process.exit unless a test replaces it. */
  exit?: (code: number) => void;
}

export function createShutdown({
  logger,
  timeoutMs,
  exit = (code) => process.exit(code),
}: ShutdownOptions): Shutdown {
  const hooks: Array<{ name: string; phase: ShutdownPhase; hook: ShutdownHook }> = [];
  let running: Promise<ShutdownResult> | undefined;

  async function runPhases(reason: string): Promise<ShutdownResult> {
    logger.info({ reason }, 'Shutting down');
    const deadline = setTimeout(() => {
      logger.error({ reason, timeoutMs }, 'Shutdown did not finish in time; exiting');
      exit(1);
    }, timeoutMs);
    deadline.unref();
    const failed: string[] = [];
    try {
      for (const phase of SHUTDOWN_PHASES) {
        const inPhase = hooks.filter((h) => h.phase === phase);
        await Promise.all(
          inPhase.map(async ({ name, hook }) => {
            try {
              await hook();
              logger.debug({ hook: name, phase }, 'Shutdown hook done');
            } catch (error) {
              failed.push(name);
              logger.error({ err: error, hook: name, phase }, 'Shutdown hook failed');
            }
          }),
        );
      }
    } finally {
      clearTimeout(deadline);
    }
    logger.info({ reason, failed }, 'Shutdown complete');
    return { reason, failed };
  }

  const shutdown: Shutdown = {
    register(name, phase, hook) {
      if (running) {
        logger.warn({ hook: name, phase }, 'Shutdown hook registered after shutdown started; not run');
        return;
      }
      hooks.push({ name, phase, hook });
    },

    run(reason) {
      running ??= runPhases(reason);
      return running;
    },

    isShuttingDown: () => running !== undefined,

    installSignalHandlers(signals = process) {
      const onSignal = (signal: string) => {
        if (running) {
          logger.warn({ signal }, 'Second signal during shutdown; exiting now');
          exit(1);
          return;
        }
        void shutdown.run(signal).then(({ failed }) => exit(failed.length > 0 ? 1 : 0));
      };
      const handlers = (['SIGTERM', 'SIGINT'] as const).map((signal) => {
        const handler = () => onSignal(signal);
        signals.on(signal, handler);
        return () => signals.off(signal, handler);
      });
      return () => {
        for (const remove of handlers) remove();
      };
    },
  };
  return shutdown;
}
