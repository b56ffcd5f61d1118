import { afterEach, beforeEach } from 'vitest';
import type { Collection, DocStore, Document } from '../src/index.js';

export interface StoreUnderTest {
  store: DocStore;
  /** Closes the store (it may be closed already) and removes everything it stored. */
  dispose(): Promise<void>;
}

export type Lead = Document & {
  name: string;
  email: string;
  status: 'new' | 'contacted' | 'qualified' | 'lost';
  score: number;
  sourceId: string;
  tags: string[];
  contact: { city: string; country: string };
  items: { sku: string; qty: number }[];
  createdAt: Date;
  phone?: string | null;
};

export const day = (n: number) => new Date(Date.UTC(2024, 0, n, 9, 30));
export function seedLeads(): Lead[] {
  const lead = (
    _id: string,
    name: string,
    email: string,
    status: Lead['status'],
    score: number,
    sourceId: string,
    tags: string[],
    city: string,
    country: string,
    items: Lead['items'],
    extra: Partial<Lead> = {},
  ): Lead => ({
    _id,
    name,
    email,
    status,
    score,
    sourceId,
    tags,
    contact: { city, country },
    items,
    createdAt: day(Number(_id.slice(1))),
    ...extra,
  });
  return [
    lead(
      'l1',
      'Ada Lovelace',
      'ada@acme.com',
      'new',
      80,
      'src-a',
      ['vip', 'tech'],
      'Paris',
      'FR',
      [
        { sku: 'a', qty: 1 },
        { sku: 'b', qty: 5 },
      ],
      { phone: '+33 1 23 45 67 89' },
    ),
    lead(
      'l2',
      'Bob Martin',
      'bob@ACME.com',
      'contacted',
      45,
      'src-a',
      ['tech'],
      'Lyon',
      'FR',
      [{ sku: 'b', qty: 2 }],
      {
        phone: null,
      },
    ),
    lead('l3', 'Chloé Dupont', 'chloe@globex.com', 'new', 60, 'src-b', [], 'Berlin', 'DE', []),
    lead('l4', 'Dan Brown', 'dan@initech.com', 'qualified', 95, 'src-b', ['vip'], 'Paris', 'FR', [
      { sku: 'c', qty: 10 },
    ]),
    lead('l5', 'Eve Adams', 'eve@acme.com', 'lost', 10, 'src-c', ['spam'], 'Madrid', 'ES', [
      { sku: 'a', qty: 3 },
    ]),
    lead('l6', 'Frank Ocean', 'frank@globex.com', 'new', 75, 'src-a', ['vip', 'music'], 'Berlin', 'DE', [
      { sku: 'b', qty: 7 },
    ]),
  ];
}

export const ids = (documents: Document[]) => documents.map((document) => document._id);

/** The store of the running test, and the leads collection seeded on it. */
export interface ContractSubject {
  readonly store: DocStore;
  seeded(): Promise<Collection<Lead>>;
}

/** Gives each test of the calling describe a store of its own from `open`, disposed after it. */
export function useStoreUnderTest(open: () => Promise<StoreUnderTest>): ContractSubject {
  let subject: StoreUnderTest;

  beforeEach(async () => {
    subject = await open();
  });

  afterEach(async () => {
    await subject.dispose();
  });

  return {
    get store() {
      return subject.store;
    },
    async seeded() {
      const leads = subject.store.collection<Lead>('leads');
      await leads.insertMany(seedLeads());
      return leads;
    },
  };
}
