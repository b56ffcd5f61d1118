import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import {
  formatInternalPublicKeys,
  generateInternalKeys,
  generateSigningKey,
  INTERNAL_KEY_CONFIG,
  INTERNAL_SIGNERS,
  internalSigner,
  parseInternalPublicKeys,
  privateKeyFrom,
  publicKeyText,
  serviceKeysFromConfig,
} from './internal-keys.js';

const keys = generateInternalKeys();
const publicKeysText = formatInternalPublicKeys(keys.publicKeys);

describe('internal keys', () => {
  it('has a signer for the gateway and for every service that calls another, and no other', () => {
    expect([...INTERNAL_SIGNERS].sort()).toEqual(['gateway', 'source', 'webhooks']);
  });

  it('reads a private key from its 32 bytes and lists its public half', () => {
    const text = generateSigningKey();
    const key = privateKeyFrom(text)!;
    expect(key.asymmetricKeyType).toBe('ed25519');
    const listed = parseInternalPublicKeys(`webhooks:${publicKeyText(key)}`)!;
    expect(publicKeyText(listed.get('webhooks')!)).toBe(publicKeyText(key));
    for (const bad of ['', 'short', `${text}x`, Buffer.alloc(31).toString('base64url')]) {
      expect(privateKeyFrom(bad), bad).toBeUndefined();
    }
  });

  it('parses INTERNAL_PUBLIC_KEYS as it formats it, and refuses a malformed list', () => {
    const parsed = parseInternalPublicKeys(publicKeysText)!;
    expect([...parsed.keys()]).toEqual([...INTERNAL_SIGNERS]);
    expect(formatInternalPublicKeys(parsed)).toBe(publicKeysText);
    const one = publicKeyText(keys.publicKeys.get('gateway')!);
    for (const bad of [
      `gateway=${one}`,
      `gateway:${one},gateway:${one}`,
      `Gateway:${one}`,
      `gateway:${one}:x`,
      'gateway:',
    ]) {
      expect(parseInternalPublicKeys(bad), bad).toBeUndefined();
    }
  });

  it('never prints a private key in a configuration error', () => {
    const leaked = `${generateSigningKey()}!`;
    expect(() => loadConfig(INTERNAL_KEY_CONFIG, { INTERNAL_SIGNING_KEY: leaked })).toThrow(
      'INTERNAL_SIGNING_KEY is invalid (value hidden)',
    );
    try {
      loadConfig(INTERNAL_KEY_CONFIG, { INTERNAL_SIGNING_KEY: leaked });
    } catch (error) {
      expect((error as Error).message).not.toContain(leaked.slice(0, 20));
    }
  });
});

describe('serviceKeysFromConfig', () => {
  const config = (env: Record<string, string>) => loadConfig(INTERNAL_KEY_CONFIG, env);
  const signingKeyOf = (name: string) =>
    keys.signer(name)!.key.export({ format: 'der', type: 'pkcs8' }).subarray(-32).toString('base64url');

  it('gives a calling service its signer, and a callee the keys of the gateway and its declared callers', () => {
    const webhooks = serviceKeysFromConfig(
      'webhooks',
      config({ INTERNAL_SIGNING_KEY: signingKeyOf('webhooks'), INTERNAL_PUBLIC_KEYS: publicKeysText }),
    );
    expect(webhooks.signer?.name).toBe('webhooks');
    const lead = serviceKeysFromConfig('lead', config({ INTERNAL_PUBLIC_KEYS: publicKeysText }));
    expect(lead.signer).toBeUndefined();
    expect(lead.trust.keyOf('gateway')).toBeDefined();
    expect(lead.trust.keyOf('webhooks')).toBeDefined();
    expect(lead.trust.keyOf('source')).toBeUndefined();
  });

  it.each([
    [
      'a calling service without its signing key',
      'source',
      { INTERNAL_PUBLIC_KEYS: publicKeysText },
      'INTERNAL_SIGNING_KEY is required: the source service calls intake',
    ],
    [
      "a service without the gateway's key",
      'scoring',
      { INTERNAL_PUBLIC_KEYS: `source:${publicKeyText(keys.publicKeys.get('source')!)}` },
      'INTERNAL_PUBLIC_KEYS lacks the key of gateway, which the scoring service must trust',
    ],
    [
      "a callee without its caller's key",
      'intake',
      { INTERNAL_PUBLIC_KEYS: `gateway:${publicKeyText(keys.publicKeys.get('gateway')!)}` },
      'INTERNAL_PUBLIC_KEYS lacks the key of source, which the intake service must trust',
    ],
    ['no keys at all', 'lead', {}, 'INTERNAL_PUBLIC_KEYS lacks the key of gateway, webhooks'],
    [
      'a signing key that is not the listed one',
      'webhooks',
      { INTERNAL_SIGNING_KEY: generateSigningKey(), INTERNAL_PUBLIC_KEYS: publicKeysText },
      "INTERNAL_SIGNING_KEY is not the private half of webhooks's key in INTERNAL_PUBLIC_KEYS",
    ],
  ])('refuses %s', (_case, service, env, message) => {
    expect(() => serviceKeysFromConfig(service, config(env))).toThrow(message);
  });

  it('refuses a key that is not an Ed25519 private key', () => {
    expect(() => internalSigner('webhooks', 'not-a-key')).toThrow('not an Ed25519 private key');
  });
});
