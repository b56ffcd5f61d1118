import { randomUUID } from 'node:crypto';

/** The webhook payload of the benches' lead `n`: its own e-mail, a phone number, one of 300 companies. */
export function benchLead(n: number) {
  return {
    email: `lead-${n}-${randomUUID().slice(0, 8)}@company${n % 300}.example`,
    firstName: 'Ada',
    lastName: `Bench ${n}`,
    phone: `+1 415 555 ${String(n % 10_000).padStart(4, '0')}`,
    company: `Company ${n % 300}`,
  };
}
