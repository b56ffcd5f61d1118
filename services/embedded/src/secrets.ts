import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@lead-capture/kit';

const SECRET_BYTES = 32;
const MIN_SECRET_LENGTH = 32;

/**
 * A secret kept in `<dataDir>/secrets/<name>` (folder 0700, file 0600): read when it exists,
 * otherwise generated once from the CSPRNG (32 bytes, base64url). Exclusive creation, so two
 * processes starting on the same folder end up with the same secret.
 */
export async function loadOrCreateSecret(
  dataDir: string,
  name: string,
  logger: Pick<Logger, 'info' | 'warn'>,
): Promise<string> {
  const folder = join(dataDir, 'secrets');
  const file = join(folder, name);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  try {
    const handle = await open(file, 'wx', 0o600);
    const secret = randomBytes(SECRET_BYTES).toString('base64url');
    try {
      await handle.writeFile(secret);
      await handle.sync();
    } finally {
      await handle.close();
    }
    logger.info({ file }, 'Secret generated');
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (((await stat(file)).mode & 0o077) !== 0) {
    await chmod(file, 0o600);
    logger.warn({ file }, 'Secret file was readable by others; permissions reset to 0600');
  }
  const secret = (await readFile(file, 'utf8')).trim();
  if (secret.length < MIN_SECRET_LENGTH)
    throw new Error(`The secret in ${file} is too short; delete it to regenerate`);
  return secret;
}
