import { buildWorkspace } from '../scripts/build/workspace-build.js';

/**
 * Once per test run, before any test file: the back end compiled to JavaScript (incremental, under
 * a second), so the processes the end-to-end tests start run what `pnpm start:distributed` and
 * the images run, and every test file finds the same current build.
 */
export default async function setup(): Promise<void> {
  await buildWorkspace();
}
