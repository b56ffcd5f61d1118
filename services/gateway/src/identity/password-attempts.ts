import { createHash } from 'node:crypto';
import { tooManyRequests } from '@lead-capture/kit';
import { rateLimitClientKey } from '../rate-limit/client-key.js';
import type { RateLimitDecision, RateLimiter } from '../rate-limit/limiter.js';
import { normalizeEmail } from './users.js';

/** Gives the attempt's slot of the failure budget back: call it unless the password was wrong. */
export type NotAFailure = () => Promise<void>;

/**
 * The budget of password checks, shared by every route that checks one (sign-in, changing one's own
 * password). Refused before any hashing: too many attempts from this address, or too many failures
 * for this account from this address. Failures are counted per account and address, so nobody can
 * lock an account (the admin's) out from everywhere else by failing its password from one place.
 * Every attempt holds a slot of the failure budget until its outcome is known (concurrent guesses
 * cannot overrun it); one that did not fail gives its slot back.
 */
export function passwordAttempts(limiter: RateLimiter) {
  function refuseWhenOver(decision: RateLimitDecision | null, message: string): void {
    if (decision?.retryAfterSeconds !== undefined) {
      throw tooManyRequests(
        `${message}; retry in ${decision.retryAfterSeconds} seconds`,
        decision.retryAfterSeconds,
      );
    }
  }

  return {
    async hold(email: string, ip: string): Promise<NotAFailure> {
      const address = rateLimitClientKey(ip);
      refuseWhenOver(
        await limiter.check('login-address', address),
        'Too many sign-in attempts from this address',
      );
      const account = createHash('sha256').update(normalizeEmail(email)).digest('base64url');
      const client = `${account}:${address}`;
      const failure = await limiter.check('login', client);
      refuseWhenOver(failure, 'Too many failed sign-in attempts for this account');
      return () => limiter.refund('login', client, failure);
    },
  };
}

export type PasswordAttempts = ReturnType<typeof passwordAttempts>;
