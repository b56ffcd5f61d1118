import { describe } from 'vitest';
import { aggregationContract } from './contract-aggregation.js';
import { documentsContract } from './contract-documents.js';
import { type StoreUnderTest, useStoreUnderTest } from './contract-fixtures.js';
import { indexesContract } from './contract-indexes.js';
import { queriesContract } from './contract-queries.js';
import { transactionsContract } from './contract-transactions.js';
import { updatesContract } from './contract-updates.js';

/**
 * The behaviour every DocStore implementation must show, as the services rely on it. Each test gets
 * a store of its own (fresh data directory or database).
 */
export function runDocStoreContract(name: string, open: () => Promise<StoreUnderTest>): void {
  describe(`DocStore contract: ${name}`, () => {
    const subject = useStoreUnderTest(open);
    documentsContract(subject);
    queriesContract(subject);
    updatesContract(subject);
    aggregationContract(subject);
    indexesContract(subject);
    transactionsContract(subject);
  });
}
