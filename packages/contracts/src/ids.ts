import { randomUUID } from 'node:crypto';

/** The last millisecond an id was made in, and the counter of ids made in it (12 bits). */
let lastMillisecond = -1;
let counter = 0;

/**
 * A new id for a record the chain writes (a lead, a submission, an event, a timeline entry, an
 * enrolment): a UUID version 7 (RFC 9562), whose first 48 bits are the creation time in
 * milliseconds, then a 12-bit counter that keeps ids made in one millisecond in order, then random
 * bits. Indexes on these ids take each insert on their newest pages, which one commit writes once
 * for many records; random (v4) ids put every insert on a page of its own, anywhere in the tree,
 * and at 100,000 leads most of those pages are no longer in the store's cache. Credentials and
 * tokens stay random v4.
 *
 * Built on `randomUUID`, whose random bits (and variant) it keeps: Node serves those from a cached
 * entropy pool, so an id costs ~0.55 µs here, while the `uuid` package's v7 asks
 * `getRandomValues` for every id (~4.7 µs), and the webhook path makes several ids per lead.
 */
export function newId(): string {
  const now = Date.now();
  if (now > lastMillisecond) {
    lastMillisecond = now;
    counter = 0;
  } else if (++counter > 0xfff) {
    // More than 4,096 ids in one millisecond: borrow the next one, so the order still holds.
    lastMillisecond++;
    counter = 0;
  }
  const time = lastMillisecond.toString(16).padStart(12, '0');
  const random = randomUUID();
  return `${time.slice(0, 8)}-${time.slice(8)}-7${counter.toString(16).padStart(3, '0')}${random.slice(18)}`;
}
