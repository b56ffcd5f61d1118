import type { LogLevel } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { createShutdown, type Shutdown } from './shutdown.js';

export interface ProcessOptions {
  /** What the process read from the environment (its spec spreads COMMON_CONFIG). */
  config: { LOG_LEVEL: LogLevel; SHUTDOWN_TIMEOUT_MS: number };
  /** The logger's name: the service's, `gateway`, `lead-capture`. */
  name: string;
  /** What the log says failed to start: `Gateway`, `Service` ... */
  title: string;
}

/**
 * The frame of a process's main.ts: its logger and the ordered shutdown on SIGTERM / SIGINT, then
 * `start`, which opens what the process holds (each resource registering its close hook) and
 * listens. A failure while starting is logged (`<title> failed to start`), the hooks registered so
 * far run, and the process exits 1.
 */
export async function runProcess(
  options: ProcessOptions,
  start: (process: { logger: Logger; shutdown: Shutdown }) => Promise<void>,
): Promise<void> {
  const { config, name, title } = options;
  const logger = createLogger({ level: config.LOG_LEVEL, name });
  const shutdown = createShutdown({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS });
  shutdown.installSignalHandlers();
  try {
    await start({ logger, shutdown });
  } catch (error) {
    logger.fatal({ err: error }, `${title} failed to start`);
    await shutdown.run('startup failure');
    process.exit(1);
  }
}
