/** The logging the store does (open, close, compaction, recovery); a pino logger fits. */
export interface StoreLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}
