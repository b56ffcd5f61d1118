import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  bool,
  COMMON_CONFIG,
  ConfigError,
  describeConfig,
  exitOnConfigError,
  int,
  loadConfig,
  oneOf,
  port,
  required,
  secret,
  str,
  url,
} from './config.js';

const spec = {
  PORT: port({ default: 3000, doc: 'HTTP port' }),
  NAME: str({ doc: 'Service name' }),
  AMQP_URL: url({ optional: true, protocols: ['amqp:', 'amqps:'], doc: 'RabbitMQ' }),
  LOG_LEVEL: oneOf(['info', 'debug'], { default: 'info', doc: 'Log level' }),
  RATE_LIMIT_MAX: int({ min: 0, default: 100, doc: 'Requests per minute' }),
  VERBOSE: bool({ default: false, doc: 'Chatty logs' }),
  JWT_SECRET: secret({ minBytes: 32, doc: 'Signs access tokens' }),
};

const goodEnv = { NAME: 'lead', JWT_SECRET: 's'.repeat(32) };

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(spec, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('returns typed values with defaults applied', () => {
    const config = loadConfig(spec, goodEnv);
    expect(config).toEqual({
      PORT: 3000,
      NAME: 'lead',
      AMQP_URL: undefined,
      LOG_LEVEL: 'info',
      RATE_LIMIT_MAX: 100,
      VERBOSE: false,
      JWT_SECRET: 's'.repeat(32),
    });
    expectTypeOf(config.PORT).toEqualTypeOf<number>();
    expectTypeOf(config.AMQP_URL).toEqualTypeOf<string | undefined>();
    expectTypeOf(config.LOG_LEVEL).toEqualTypeOf<'info' | 'debug'>();
    expectTypeOf(config.VERBOSE).toEqualTypeOf<boolean>();
    expectTypeOf(config.JWT_SECRET).toEqualTypeOf<string>();
  });

  it('parses what operators write', () => {
    const config = loadConfig(spec, {
      ...goodEnv,
      PORT: '8080',
      AMQP_URL: 'amqps://user:pw@rabbit:5671/vhost',
      LOG_LEVEL: 'debug',
      RATE_LIMIT_MAX: '0',
      VERBOSE: 'yes',
    });
    expect(config).toMatchObject({
      PORT: 8080,
      AMQP_URL: 'amqps://user:pw@rabbit:5671/vhost',
      LOG_LEVEL: 'debug',
      RATE_LIMIT_MAX: 0,
      VERBOSE: true,
    });
  });

  it('treats an empty value as unset', () => {
    expect(loadConfig(spec, { ...goodEnv, PORT: '', AMQP_URL: ' ' })).toMatchObject({
      PORT: 3000,
      AMQP_URL: undefined,
    });
  });

  it.each([
    ['PORT', 'abc', 'PORT="abc" is invalid: expected a port number from 0 to 65535'],
    ['PORT', '70000', 'PORT="70000" is invalid: expected a port number from 0 to 65535'],
    ['RATE_LIMIT_MAX', '-1', 'RATE_LIMIT_MAX="-1" is invalid: expected an integer >= 0'],
    ['RATE_LIMIT_MAX', '1.5', 'RATE_LIMIT_MAX="1.5" is invalid: expected an integer >= 0'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL="loud" is invalid: expected one of: info, debug'],
    ['VERBOSE', 'maybe', 'VERBOSE="maybe" is invalid: expected true or false (also 1/0, yes/no, on/off)'],
    [
      'AMQP_URL',
      'rabbit:5672',
      'AMQP_URL="rabbit:5672" is invalid: expected a URL starting with amqp:// or amqps://',
    ],
    [
      'AMQP_URL',
      'http://guest:hunter2@rabbit',
      'AMQP_URL="http://guest:***@rabbit" is invalid: expected a URL starting with amqp:// or amqps://',
    ],
  ])('names the variable, the bad value and what was expected: %s=%s', (name, value, message) => {
    expect(problemsOf({ ...goodEnv, [name]: value })).toEqual([message]);
  });

  it('never prints a secret', () => {
    const problems = problemsOf({ ...goodEnv, JWT_SECRET: 'tooshort-hunter2' });
    expect(problems).toEqual([
      'JWT_SECRET is invalid (value hidden): expected a secret of at least 32 bytes',
    ]);
  });

  it('reports every missing required variable at once, with its doc', () => {
    expect(problemsOf({})).toEqual([
      'NAME is required: Service name (expected a string)',
      'JWT_SECRET is required: Signs access tokens (expected a secret of at least 32 bytes)',
    ]);
  });

  it('throws a ConfigError whose message lists the problems', () => {
    expect(() => loadConfig(spec, { ...goodEnv, PORT: 'x' })).toThrow(
      'Invalid configuration:\n  - PORT="x" is invalid: expected a port number from 0 to 65535',
    );
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(loadConfig(spec, goodEnv))).toBe(true);
  });
});

describe('required', () => {
  it('makes an optional variable mandatory (PUBLIC_BASE_URL, say)', () => {
    const strict = { PUBLIC_BASE_URL: required(COMMON_CONFIG.PUBLIC_BASE_URL) };
    expect(() => loadConfig(strict, {})).toThrow('PUBLIC_BASE_URL is required');
    const config = loadConfig(strict, { PUBLIC_BASE_URL: 'https://leads.example.com' });
    expectTypeOf(config.PUBLIC_BASE_URL).toEqualTypeOf<string>();
    expect(loadConfig(COMMON_CONFIG, {}).PUBLIC_BASE_URL).toBeUndefined();
  });
});

describe('COMMON_CONFIG', () => {
  it('starts with no environment at all (embedded mode needs nothing)', () => {
    expect(loadConfig(COMMON_CONFIG, {})).toEqual({
      PORT: 3000,
      HOST: '0.0.0.0',
      LOG_LEVEL: 'info',
      DATA_DIR: './data',
      MONGO_URL: undefined,
      AMQP_URL: undefined,
      REDIS_URL: undefined,
      PUBLIC_BASE_URL: undefined,
      BODY_LIMIT_BYTES: 1_048_576,
      REQUEST_BODY_TIMEOUT_MS: 600_000,
      SHUTDOWN_TIMEOUT_MS: 10_000,
    });
  });
});

describe('MONGO_URL and AMQP_URL', () => {
  it('refuses MongoDB without RabbitMQ, naming both variables', () => {
    const env = { MONGO_URL: 'mongodb://mongo:27017/leads' };
    expect(() => loadConfig(COMMON_CONFIG, env)).toThrow(ConfigError);
    expect(() => loadConfig(COMMON_CONFIG, env)).toThrow(/MONGO_URL is set but AMQP_URL is not/);
    expect(loadConfig(COMMON_CONFIG, { ...env, AMQP_URL: 'amqp://rabbit' })).toMatchObject({
      MONGO_URL: 'mongodb://mongo:27017/leads',
      AMQP_URL: 'amqp://rabbit',
    });
    expect(loadConfig(COMMON_CONFIG, { AMQP_URL: 'amqp://rabbit' }).MONGO_URL).toBeUndefined();
  });
});

describe('describeConfig', () => {
  it('lists every variable with its default and doc, for the README table', () => {
    const rows = describeConfig(spec);
    expect(rows.map((r) => r.name)).toEqual(Object.keys(spec));
    expect(rows[0]).toEqual({
      name: 'PORT',
      doc: 'HTTP port',
      expected: 'a port number from 0 to 65535',
      default: '3000',
      required: false,
      secret: false,
    });
    expect(rows.find((r) => r.name === 'JWT_SECRET')).toMatchObject({
      default: undefined,
      required: true,
      secret: true,
    });
    expect(rows.find((r) => r.name === 'VERBOSE')).toMatchObject({ default: 'false' });
  });
});

describe('exitOnConfigError', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints the problems and exits with status 1', () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exit ${code}`);
    });
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(() => exitOnConfigError(() => loadConfig(spec, { ...goodEnv, PORT: 'x' }))).toThrow('exit 1');
    expect(exit).toHaveBeenCalledWith(1);
    expect(printed).toHaveBeenCalledWith(expect.stringContaining('PORT="x" is invalid'));
  });

  it('returns the config when it is valid, and lets other errors through', () => {
    expect(exitOnConfigError(() => loadConfig(spec, goodEnv)).NAME).toBe('lead');
    expect(() =>
      exitOnConfigError(() => {
        throw new TypeError('boom');
      }),
    ).toThrow('boom');
  });
});
