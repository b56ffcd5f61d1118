import { openEmbeddedStore } from '../src/index.js';
import { runDocStoreContract } from './contract.js';
import { tempDir } from './temp-dir.js';

runDocStoreContract('embedded', async () => {
  const dataDir = await tempDir('contract');
  const store = await openEmbeddedStore({ dataDir: dataDir.path });
  return {
    store,
    async dispose() {
      await store.close();
      await dataDir.remove();
    },
  };
});
