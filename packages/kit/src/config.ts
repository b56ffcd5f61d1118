/**
 * Configuration from environment variables, declared once per process and validated at boot.
 * A spec maps variable names to declarations (`port(...)`, `str(...)`, `url(...)` ...);
 * `loadConfig(spec)` returns a typed, frozen object or throws a ConfigError naming every bad variable.
 * Nothing else in the codebase reads process.env.
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One declared variable. T includes `undefined` when the variable is optional without a default. */
export interface ConfigVar<T> {
  readonly doc: string;
  /** What a valid value looks like, for messages and the README table: `an integer >= 0`. */
  readonly expected: string;
  readonly default: T | undefined;
  /** Missing (or empty) and no default: the process does not start. */
  readonly required: boolean;
  /** Never printed: not in error messages, not in describeConfig defaults. */
  readonly secret: boolean;
  /** The parsed value, or INVALID. */
  readonly parse: (raw: string) => T | typeof INVALID;
}

const INVALID: unique symbol = Symbol('invalid');

export type ConfigSpec = Record<string, ConfigVar<unknown>>;

export type ConfigOf<S extends ConfigSpec> = {
  readonly [K in keyof S]: S[K] extends { parse: (raw: string) => infer R }
    ? Exclude<R, typeof INVALID>
    : never;
};

interface CommonOptions<T> {
  doc: string;
  default?: T;
  /** Allowed to be unset; the value is then undefined. */
  optional?: boolean;
}

/** The value type a declaration yields: T, or T | undefined when optional without a default. */
type ValueOf<O, T> = O extends { default: T } ? T : O extends { optional: true } ? T | undefined : T;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

function declare<T, O extends CommonOptions<T>>(
  options: O,
  expected: string,
  parse: (raw: string) => T | typeof INVALID,
  secret = false,
): ConfigVar<ValueOf<O, T>> {
  return {
    doc: options.doc,
    expected,
    default: options.default as ValueOf<O, T> | undefined,
    required: options.default === undefined && options.optional !== true,
    secret,
    parse: parse as (raw: string) => ValueOf<O, T> | typeof INVALID,
  };
}

/** Any string, as given. */
export function str<const O extends CommonOptions<string>>(options: O): ConfigVar<ValueOf<O, string>> {
  return declare(options, 'a string', (raw) => raw);
}

export interface IntOptions extends CommonOptions<number> {
  min?: number;
  max?: number;
}

export function int<const O extends IntOptions>(options: O): ConfigVar<ValueOf<O, number>> {
  const { min, max } = options;
  const expected =
    min !== undefined && max !== undefined
      ? `an integer from ${min} to ${max}`
      : min !== undefined
        ? `an integer >= ${min}`
        : max !== undefined
          ? `an integer <= ${max}`
          : 'an integer';
  return declare(options, expected, (raw) => {
    if (!/^[+-]?\d+$/.test(raw.trim())) return INVALID;
    const value = Number(raw);
    if (!Number.isSafeInteger(value)) return INVALID;
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) return INVALID;
    return value;
  });
}

/** A TCP port; 0 lets the OS pick one (tests). */
export function port<const O extends CommonOptions<number>>(options: O): ConfigVar<ValueOf<O, number>> {
  return { ...int({ ...options, min: 0, max: 65535 }), expected: 'a port number from 0 to 65535' };
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

export function bool<const O extends CommonOptions<boolean>>(options: O): ConfigVar<ValueOf<O, boolean>> {
  return declare(options, 'true or false (also 1/0, yes/no, on/off)', (raw) => {
    const value = raw.trim().toLowerCase();
    return TRUE.has(value) ? true : FALSE.has(value) ? false : INVALID;
  });
}

export interface UrlOptions extends CommonOptions<string> {
  /** Accepted schemes with their colon, e.g. ['amqp:', 'amqps:']. Any when absent. */
  protocols?: readonly string[];
}

/** An absolute URL, returned as given. Credentials in it are masked in error messages. */
export function url<const O extends UrlOptions>(options: O): ConfigVar<ValueOf<O, string>> {
  const { protocols } = options;
  const expected = protocols ? `a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}` : 'a URL';
  return declare(options, expected, (raw) => {
    const value = raw.trim();
    if (!URL.canParse(value)) return INVALID;
    if (protocols && !protocols.includes(new URL(value).protocol)) return INVALID;
    return value;
  });
}

export function oneOf<const V extends readonly string[], const O extends CommonOptions<V[number]>>(
  values: V,
  options: O,
): ConfigVar<ValueOf<O, V[number]>> {
  return declare(options, `one of: ${values.join(', ')}`, (raw) => {
    const value = raw.trim();
    return values.includes(value) ? (value as V[number]) : INVALID;
  });
}

export interface SecretOptions {
  doc: string;
  /** Minimum length in bytes (UTF-8). */
  minBytes: number;
  optional?: boolean;
}

/** A secret string: never has a default, never printed. */
export function secret<const O extends SecretOptions>(options: O): ConfigVar<ValueOf<O, string>> {
  return declare(
    options,
    `a secret of at least ${options.minBytes} bytes`,
    (raw) => (Buffer.byteLength(raw, 'utf8') >= options.minBytes ? raw : INVALID),
    true,
  );
}

export interface CustomOptions<T> {
  doc: string;
  /** What a valid value looks like, for messages and the README table. */
  expected: string;
  default: T;
  /** The parsed value, or undefined when the text is not valid. */
  parse: (raw: string) => T | undefined;
}

/** A variable with its own parser (e.g. TRUST_PROXY: a hop count or a list of addresses). */
export function custom<T>(options: CustomOptions<T>): ConfigVar<T> {
  const { expected, parse } = options;
  return declare<T, { doc: string; default: T }>(options, expected, (raw) => parse(raw) ?? INVALID);
}

export interface ParsedOptions<T> {
  doc: string;
  /** What a valid value looks like, for messages and the README table. */
  expected: string;
  optional?: boolean;
  /** Never printed (a private key). */
  secret?: boolean;
  /** The parsed value, or undefined when the text is not valid. */
  parse: (raw: string) => T | undefined;
}

/** A variable with its own parser and no default (e.g. a key, or a list of keys). */
export function parsed<T, const O extends ParsedOptions<T> = ParsedOptions<T>>(
  options: O & ParsedOptions<T>,
): ConfigVar<ValueOf<O, T>> {
  const { expected, parse } = options;
  return declare<T, O>(options, expected, (raw) => parse(raw) ?? INVALID, options.secret ?? false);
}

/** The same declaration, but the process does not start without it. */
export function required<T>(variable: ConfigVar<T | undefined>): ConfigVar<T> {
  return { ...variable, required: true } as ConfigVar<T>;
}

/**
 * Reads and checks every variable of the spec. Unset and empty values count as missing.
 * Throws one ConfigError listing every problem, each naming the variable, the bad value (unless
 * secret) and what was expected.
 */
export function loadConfig<S extends ConfigSpec>(
  spec: S,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ConfigOf<S> {
  const config: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, variable] of Object.entries(spec)) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') {
      if (variable.required)
        problems.push(`${name} is required: ${variable.doc} (expected ${variable.expected})`);
      config[name] = variable.default;
      continue;
    }
    const value = variable.parse(raw);
    if (value === INVALID) {
      const shown = variable.secret
        ? ' is invalid (value hidden)'
        : `=${JSON.stringify(maskCredentials(raw))} is invalid`;
      problems.push(`${name}${shown}: expected ${variable.expected}`);
      continue;
    }
    config[name] = value;
  }
  if ('MONGO_URL' in spec && 'AMQP_URL' in spec) problems.push(...storageProblems(config));
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config) as ConfigOf<S>;
}

/**
 * The store and the bus go together: the in-process bus keeps its queues in the embedded store, so a
 * process on MongoDB needs RabbitMQ.
 */
function storageProblems(config: Record<string, unknown>): string[] {
  if (config.MONGO_URL === undefined || config.AMQP_URL !== undefined) return [];
  return [
    'MONGO_URL is set but AMQP_URL is not: the in-process bus keeps its queues in the embedded store, so a process on MongoDB needs RabbitMQ (set AMQP_URL, or unset MONGO_URL for the embedded store)',
  ];
}

/**
 * Loads the config, or prints the ConfigError to stderr and exits with status 1 (a process
 * without valid config must not start). Other errors propagate.
 */
/** `loadConfig` of one spec, for a service's `loadXConfig`: the environment unless `env` is given. */
export function configLoader<S extends ConfigSpec>(
  spec: S,
): (env?: Readonly<Record<string, string | undefined>>) => ConfigOf<S> {
  return (env) => loadConfig(spec, env);
}

export function exitOnConfigError<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    return process.exit(1);
  }
}

export interface ConfigVarDescription {
  name: string;
  doc: string;
  expected: string;
  /** The default as text; undefined when there is none. */
  default: string | undefined;
  required: boolean;
  secret: boolean;
}

/** Every declared variable with its default and doc, in declaration order (for the README table). */
export function describeConfig(spec: ConfigSpec): ConfigVarDescription[] {
  return Object.entries(spec).map(([name, variable]) => ({
    name,
    doc: variable.doc,
    expected: variable.expected,
    default: variable.default === undefined ? undefined : String(variable.default),
    required: variable.required,
    secret: variable.secret,
  }));
}

/** `amqp://user:pass@host` -> `amqp://user:***@host`, so a rejected URL can be shown safely. */
function maskCredentials(value: string): string {
  return value.replace(/(\/\/[^/@:\s]*:)[^/@\s]*@/, '$1***@');
}

/** An optional URL with one of `protocols`; its `doc` says what the process does without it. */
function optionalUrl(protocols: readonly string[], doc: string) {
  return url({ optional: true, protocols, doc });
}

/** The variables every process reads. A service spreads them into its own spec. */
export const COMMON_CONFIG = {
  PORT: port({ default: 3000, doc: 'HTTP port the process listens on' }),
  HOST: str({ default: '0.0.0.0', doc: 'Interface to listen on (0.0.0.0 inside containers)' }),
  LOG_LEVEL: oneOf(LOG_LEVELS, { default: 'info', doc: 'Minimum level written to the log' }),
  DATA_DIR: str({
    default: './data',
    doc: 'Folder of the embedded docstore and the in-process bus queues (used when MONGO_URL / AMQP_URL are unset)',
  }),
  MONGO_URL: optionalUrl(
    ['mongodb:', 'mongodb+srv:'],
    'MongoDB connection string (needs AMQP_URL too); unset: the embedded docstore under DATA_DIR',
  ),
  AMQP_URL: optionalUrl(['amqp:', 'amqps:'], 'RabbitMQ connection URL; unset: the in-process bus'),
  REDIS_URL: optionalUrl(
    ['redis:', 'rediss:'],
    'Redis connection URL (rate limiting); unset: in-memory limits',
  ),
  PUBLIC_BASE_URL: optionalUrl(
    ['http:', 'https:'],
    'Public base URL used in webhook URLs; unset: derived from each request',
  ),
  BODY_LIMIT_BYTES: int({ min: 1, default: 1_048_576, doc: 'Largest accepted request body, in bytes' }),
  REQUEST_BODY_TIMEOUT_MS: int({
    min: 100,
    default: 600_000,
    doc: 'Time any request body may take to arrive (a CSV upload included), counted from the start of its request; past it the answer is 408 and the connection is closed',
  }),
  SHUTDOWN_TIMEOUT_MS: int({
    min: 0,
    default: 10_000,
    doc: 'Time allowed for a graceful shutdown before the process exits anyway',
  }),
};
