import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { requireService, uniquePrefix } from '@lead-capture/testing';
import { MongoClient } from 'mongodb';
import { afterAll, describe, it } from 'vitest';
import { openMongoStore } from '../src/index.js';
import { runDocStoreContract } from './contract.js';

interface MongoServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * MongoDB for the contract: MONGO_URL when set, else a container when Docker is there, else none
 * (the embedded run still covers the contract; skipping this one is allowed, CI included).
 */
async function findMongo(): Promise<MongoServer | null> {
  const configured = process.env.MONGO_URL;
  if (configured) {
    return (await requireService('MongoDB', configured)) ? { url: configured, stop: async () => {} } : null;
  }
  const dockerSockets = [
    process.env.DOCKER_HOST,
    '/var/run/docker.sock',
    join(homedir(), '.docker/run/docker.sock'),
  ];
  if (!dockerSockets.some((socket) => socket && (socket.includes('://') || existsSync(socket)))) {
    console.warn('[tests] MONGO_URL is unset and Docker is not available: skipping the MongoDB contract run');
    return null;
  }
  try {
    const { MongoDBContainer } = await import('@testcontainers/mongodb');
    const container = await new MongoDBContainer('mongo:7.0').start();
    // The container runs a one-member replica set that advertises its internal host name.
    return {
      url: `${container.getConnectionString()}/?directConnection=true`,
      stop: async () => {
        await container.stop();
      },
    };
  } catch (error) {
    console.warn(
      `[tests] Docker could not start MongoDB (${String(error)}): skipping the MongoDB contract run`,
    );
    return null;
  }
}

/** The server URL with its path replaced by a database name, query kept. */
function urlForDatabase(serverUrl: string, database: string): string {
  const [, base, query = ''] = /^(mongodb(?:\+srv)?:\/\/[^/?]*)(?:\/[^?]*)?(\?.*)?$/.exec(serverUrl) ?? [];
  return `${base}/${database}${query}`;
}

const mongo = await findMongo();

if (mongo) {
  const admin = new MongoClient(mongo.url);
  afterAll(async () => {
    await admin.close();
    await mongo.stop();
  });

  runDocStoreContract('mongodb', async () => {
    const database = uniquePrefix('docstore').replaceAll('-', '_');
    const store = await openMongoStore(urlForDatabase(mongo.url, database));
    return {
      store,
      async dispose() {
        await store.close();
        await admin.db(database).dropDatabase();
      },
    };
  });
} else {
  describe.skip('DocStore contract: mongodb (no MongoDB: set MONGO_URL or run Docker)', () => {
    it('runs the contract against MongoDB', () => {});
  });
}
