import { v7 } from 'uuid';

/**
 * A new id for a record the chain writes (a lead, a submission, an event, a timeline entry, an
 * enrolment): a UUID version 7, whose first 48 bits are the creation time in milliseconds and the
 * rest random (the `uuid` package keeps them increasing within a process). Indexes on these ids
 * then take each insert on their newest pages, which one commit writes once for many records;
 * random (v4) ids put every insert on a page of its own, anywhere in the tree, and at 100,000 leads
 * most of those pages are no longer in the store's cache. Credentials and tokens stay random v4.
 */
export function newId(): string {
  return v7();
}
