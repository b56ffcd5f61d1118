import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderManifests } from '../k8s/render.js';

/** Writes deploy/k8s/lead-capture.yaml from deploy/k8s/manifests.ts. */
const target = fileURLToPath(new URL('../k8s/lead-capture.yaml', import.meta.url));
await writeFile(target, renderManifests());
console.log(`Wrote ${target}`);
