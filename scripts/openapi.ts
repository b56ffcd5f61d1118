/**
 * `pnpm openapi`: writes docs/openapi.json, the public API's OpenAPI document as the embedded
 * runtime serves it at GET /api/openapi.json (built from the route schemas, never listening; keys
 * sorted so the file changes only with the API), formatted by Biome like every other file. Run it
 * after changing a route; services/embedded/test/openapi.test.ts fails while the committed file
 * differs from what the routes generate.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  fetchEmbeddedOpenApi,
  OPENAPI_DOCUMENT_FILE,
  REPO_ROOT,
  sameDocument,
  sortKeys,
} from '../services/embedded/test/openapi-document.js';

const target = join(REPO_ROOT, OPENAPI_DOCUMENT_FILE);
const document = sortKeys(await fetchEmbeddedOpenApi());
const previous = await readFile(target, 'utf8').catch(() => null);
if (previous !== null && sameDocument(previous, document)) {
  console.log(`${OPENAPI_DOCUMENT_FILE} already up to date`);
} else {
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, `${JSON.stringify(document, null, 2)}\n`);
  // Biome's layout (short arrays on one line), so `pnpm lint` passes on the generated file as it is.
  execFileSync(join(REPO_ROOT, 'node_modules', '.bin', 'biome'), ['format', '--write', target], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  console.log(`${OPENAPI_DOCUMENT_FILE} updated`);
}
