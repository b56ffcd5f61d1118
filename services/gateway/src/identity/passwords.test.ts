import { describe, expect, it } from 'vitest';
import { hashPassword, unmatchableHash, verifyPassword } from './passwords.js';

describe('password hashes', () => {
  it('are scrypt with the OWASP parameters stored beside a random salt, and verify only the right password', async () => {
    const hash = await hashPassword('s3cret passphrase');
    expect(hash).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{86}$/);
    expect(await verifyPassword('s3cret passphrase', hash)).toBe(true);
    expect(await verifyPassword('s3cret passphrasE', hash)).toBe(false);
    expect(await hashPassword('s3cret passphrase')).not.toBe(hash);
  });

  it('verify with the parameters stored in the hash, and refuse absurd ones', async () => {
    expect(await verifyPassword('anything', unmatchableHash())).toBe(false);
    const tampered = unmatchableHash().replace('ln=17', 'ln=40');
    await expect(verifyPassword('anything', tampered)).rejects.toThrow(/out of range/);
    await expect(verifyPassword('anything', 'plain-text')).rejects.toThrow(/Not a scrypt/);
  });
});
