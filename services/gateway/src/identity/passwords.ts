import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Password hashes: scrypt with the OWASP parameters (N = 2^17, r = 8, p = 1), a random 16-byte
 * salt, a 64-byte key. Stored as `$scrypt$ln=17,r=8,p=1$<salt>$<key>` (base64, no padding) so the
 * parameters travel with each hash and can be raised later without breaking old ones.
 */
interface ScryptParameters {
  /** log2 of the cost N. */
  ln: number;
  r: number;
  p: number;
}

const CURRENT: ScryptParameters = { ln: 17, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 64;
/** Stored parameters beyond these are refused rather than allowed to exhaust memory or CPU. */
const MAX_LN = 22;
const MAX_R = 32;
const MAX_P = 16;

const HASH_FORMAT = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

function derive(password: string, salt: Buffer, { ln, r, p }: ScryptParameters): Promise<Buffer> {
  const N = 2 ** ln;
  // scrypt needs 128 * N * r bytes; Node's default maxmem (32 MiB) is below what N = 2^17 needs.
  const options: ScryptOptions = { N, r, p, maxmem: 128 * N * r * p + 32 * 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

function encode(parameters: ScryptParameters, salt: Buffer, key: Buffer): string {
  const { ln, r, p } = parameters;
  const base64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
  return `$scrypt$ln=${ln},r=${r},p=${p}$${base64(salt)}$${base64(key)}`;
}

function decode(hash: string): { parameters: ScryptParameters; salt: Buffer; key: Buffer } {
  const match = HASH_FORMAT.exec(hash);
  if (!match) throw new Error('Not a scrypt password hash');
  const [ln, r, p] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  if (ln < 1 || ln > MAX_LN || r < 1 || r > MAX_R || p < 1 || p > MAX_P) {
    throw new Error('Password hash parameters out of range');
  }
  return {
    parameters: { ln, r, p },
    salt: Buffer.from(match[4]!, 'base64'),
    key: Buffer.from(match[5]!, 'base64'),
  };
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  return encode(CURRENT, salt, await derive(password, salt, CURRENT));
}

/** Constant-time comparison of the derived key; false for a wrong password. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const { parameters, salt, key } = decode(hash);
  const candidate = await derive(password, salt, parameters);
  return candidate.length === key.length && timingSafeEqual(candidate, key);
}

/**
 * A hash no password matches, with the current parameters: login verifies against it when the
 * e-mail is unknown, so an unknown e-mail costs the same time as a wrong password.
 */
export function unmatchableHash(): string {
  return encode(CURRENT, randomBytes(SALT_BYTES), randomBytes(KEY_BYTES));
}
