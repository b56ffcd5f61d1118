import { randomBytes } from 'node:crypto';
import { AppError, type Logger } from '@lead-capture/kit';
import type { UserDirectory } from './users.js';

export interface FirstAdminOptions {
  /** ADMIN_EMAIL. */
  email?: string;
  /** ADMIN_PASSWORD. */
  password?: string;
  /** ADMIN_NAME. */
  name: string;
  /**
   * Embedded mode: when the e-mail or password is missing, use admin@example.com and a generated
   * password, and hand them to this function (once) so the operator can sign in. Without it, the
   * gateway does not start while no user exists and the variables are unset.
   */
  announceGenerated?: (credentials: { email: string; password: string }) => void;
}

export const EMBEDDED_ADMIN_EMAIL = 'admin@example.com';

/**
 * Creates the first admin when no user exists. Safe when replicas start together: the unique
 * e-mail index lets one insert win; the others find the user there.
 */
export async function ensureFirstAdmin(
  users: UserDirectory,
  options: FirstAdminOptions,
  logger: Logger,
): Promise<void> {
  if (!(await users.isEmpty())) return;
  const { announceGenerated } = options;
  const email = options.email ?? (announceGenerated ? EMBEDDED_ADMIN_EMAIL : undefined);
  if (email === undefined || (options.password === undefined && !announceGenerated)) {
    throw new Error('No user exists yet: set ADMIN_EMAIL and ADMIN_PASSWORD to create the first admin');
  }
  const password = options.password ?? randomBytes(18).toString('base64url');
  try {
    await users.create({ email, name: options.name, password, role: 'admin' });
  } catch (error) {
    if (error instanceof AppError && error.kind === 'conflict') return;
    throw error;
  }
  logger.info({ email }, 'First admin created');
  if (options.password === undefined) announceGenerated?.({ email, password });
}
