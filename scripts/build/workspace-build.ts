import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The export condition that points a workspace package at its compiled `dist/`. */
export const BUILD_CONDITION = 'lead-capture-build';

/** Node's arguments that make `@lead-capture/*` imports resolve to the compiled JavaScript. */
export const BUILD_NODE_ARGS = [`--conditions=${BUILD_CONDITION}`] as const;

/**
 * V8 flags every service process runs with (`pnpm start`, `pnpm start:distributed`, the image).
 * `--heap-growing-percent=50`: the heap may grow to 1.5 times what the last full collection kept,
 * instead of up to 4 times. The chain promotes many short-lived objects (a lead waits for its
 * fsync across several young collections), so by default the old space grew to ~250 MB of mostly
 * garbage around a live set of ~70 MB. `pnpm bench e2e`, 10,000-row import: peak RSS 361 MB
 * without, 241 MB with; `pnpm bench chain`, alternating: no measurable CPU cost.
 * `--no-memory-reducer`: V8's memory reducer runs full collections once a process turns idle, to
 * shrink a heap nobody is growing; a service that had just started paid 20-200 ms of CPU for them in
 * its first idle seconds (the gateway most). `pnpm bench e2e` distributed, idle 10 s once started:
 * 4.6-5.3 % of one core with it, 2.3 % without; RSS once started, after the drain and after an
 * import: the same within 3 %.
 */
export const HEAP_NODE_ARGS = ['--heap-growing-percent=50', '--no-memory-reducer'] as const;

export interface BuiltPackage {
  name: string;
  dir: string;
  /** Files written because their JavaScript changed (the others were already current). */
  written: number;
  files: number;
}

/** The compiled entry of a service: `services/<name>/dist/main.js`, relative to the repository. */
export function serviceEntry(service: string): string {
  return join('services', service, 'dist', 'main.js');
}

/**
 * Workspace packages that are built: those that export the build condition (libraries and the
 * services the embedded runtime imports) and those with a `src/main.ts` (a process of their own).
 */
export function buildablePackages(root = REPO_ROOT): { name: string; dir: string }[] {
  const found: { name: string; dir: string }[] = [];
  for (const group of ['packages', 'services']) {
    for (const entry of readdirSync(join(root, group), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const dir = join(root, group, entry.name);
      let manifest: string;
      try {
        manifest = readFileSync(join(dir, 'package.json'), 'utf8');
      } catch {
        continue;
      }
      const pkg = JSON.parse(manifest) as { name: string; exports?: unknown };
      const exportsBuild = JSON.stringify(pkg.exports ?? {}).includes(`"${BUILD_CONDITION}"`);
      if (exportsBuild || existsSync(join(dir, 'src', 'main.ts'))) found.push({ name: pkg.name, dir });
    }
  }
  return found;
}

async function sourceFiles(srcDir: string): Promise<string[]> {
  const entries = await readdir(srcDir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .filter((entry) => !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Transpiles every buildable package into its `dist/`. Incremental and safe while processes run
 * from `dist/`: a file is replaced (written beside, then renamed) only when its JavaScript changed,
 * and files whose source is gone are removed afterwards, so several callers at once agree.
 */
export async function buildWorkspace(root = REPO_ROOT): Promise<BuiltPackage[]> {
  return Promise.all(
    buildablePackages(root).map(async ({ name, dir }) => {
      const srcDir = join(dir, 'src');
      const outDir = join(dir, 'dist');
      const entryPoints = await sourceFiles(srcDir);
      const result = await build({
        entryPoints,
        outdir: outDir,
        outbase: srcDir,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        sourcemap: 'linked',
        bundle: false,
        write: false,
        logLevel: 'silent',
      });
      const expected = new Set<string>();
      let written = 0;
      for (const file of result.outputFiles) {
        expected.add(file.path);
        const current = await readFile(file.path).catch(() => undefined);
        if (current?.equals(file.contents)) continue;
        await mkdir(dirname(file.path), { recursive: true });
        const temporary = `${file.path}.${process.pid}.tmp`;
        await writeFile(temporary, file.contents);
        await rename(temporary, file.path);
        written++;
      }
      for (const existing of await readdir(outDir, { recursive: true, withFileTypes: true }).catch(
        () => [],
      )) {
        const path = join(existing.parentPath, existing.name);
        if (existing.isFile() && !expected.has(path) && !path.endsWith('.tmp'))
          await rm(path, { force: true });
      }
      return { name, dir: relative(root, dir), written, files: entryPoints.length };
    }),
  );
}

/** Whether `services/<name>/dist/main.js` exists (the build has run at least once). */
export async function isBuilt(service: string, root = REPO_ROOT): Promise<boolean> {
  return stat(join(root, serviceEntry(service))).then(
    (info) => info.isFile(),
    () => false,
  );
}
