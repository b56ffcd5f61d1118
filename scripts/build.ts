/**
 * `pnpm build`: the back end compiled to JavaScript for plain `node`. Every workspace package whose
 * package.json exports a `lead-capture-build` condition has its `src/**\/*.ts` (tests excepted)
 * transpiled file by file into its own `dist/`, same relative paths, with esbuild: the same
 * transpiler tsx runs at every start, so the JavaScript is what the tests ran (the tsconfig's
 * `isolatedModules` and `verbatimModuleSyntax` make per-file transpiling exact). Types are checked
 * by `pnpm typecheck`, not here. Run the result with
 * `node --conditions=lead-capture-build services/<name>/dist/main.js` so `@lead-capture/*` imports
 * resolve to `dist/` (without the condition they resolve to `src/`, as tsx, vitest and tsc want).
 */
import { pathToFileURL } from 'node:url';
import { buildWorkspace } from './build/workspace-build.js';

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = performance.now();
  const built = await buildWorkspace();
  const files = built.reduce((sum, { files: count }) => sum + count, 0);
  console.log(
    `Built ${built.length} packages (${files} files) into their dist/ in ${Math.round(performance.now() - started)} ms`,
  );
}
