/**
 * `pnpm bench`: runs every benchmark script (packages/<name>/bench/*.bench.ts and the same under
 * services/, then the end-to-end e2e/bench/*.bench.ts last: it starts the real processes and takes
 * longest) one after another, so they do not compete for the CPU, and prints what each measured.
 * A benchmark prints its human-readable table and ends with one line `BENCH_JSON {...}`; the
 * collected results are also written to .bench/results.json for comparison between runs.
 * `pnpm bench docstore` runs only the benchmarks whose path contains "docstore"; `pnpm bench e2e`
 * only the end-to-end one (its knobs are in the header of e2e/bench/e2e.bench.ts).
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const filter = process.argv[2];

async function benchFiles(benchDir: string): Promise<string[]> {
  const files = await readdir(benchDir).catch(() => []);
  return files.filter((file) => file.endsWith('.bench.ts')).map((file) => join(benchDir, file));
}

async function findBenchmarks(): Promise<string[]> {
  const found: string[] = [];
  for (const area of ['packages', 'services']) {
    for (const name of await readdir(join(root, area)))
      found.push(...(await benchFiles(join(root, area, name, 'bench'))));
  }
  const endToEnd = await benchFiles(join(root, 'e2e', 'bench'));
  // The filter is matched against the path from the repository root, so "e2e" means e2e/bench only.
  const matches = (file: string) => !filter || relative(root, file).includes(filter);
  return [...found.filter(matches).sort(), ...endToEnd.filter(matches).sort()];
}

function runBenchmark(file: string): Promise<{ code: number; result: unknown }> {
  return new Promise((resolve) => {
    const child = spawn(join(root, 'node_modules/.bin/tsx'), [file], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let result: unknown = null;
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith('BENCH_JSON ')) result = JSON.parse(line.slice('BENCH_JSON '.length));
        else process.stdout.write(`${line}\n`);
      }
    });
    child.on('close', (code) => resolve({ code: code ?? 1, result }));
  });
}

const benchmarks = await findBenchmarks();
if (benchmarks.length === 0) {
  console.error(filter ? `No benchmark matches "${filter}"` : 'No benchmarks found');
  process.exit(1);
}
const results: Record<string, unknown> = {};
let failures = 0;
for (const file of benchmarks) {
  const name = relative(root, file);
  console.log(`\n## ${name}`);
  const { code, result } = await runBenchmark(file);
  if (code !== 0) failures++;
  results[name] = code === 0 ? result : { failed: true, exitCode: code };
}
await mkdir(join(root, '.bench'), { recursive: true });
await writeFile(
  join(root, '.bench/results.json'),
  `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`,
);
console.log(
  `\n${benchmarks.length - failures} benchmarks done, ${failures} failed; results in .bench/results.json`,
);
process.exit(failures > 0 ? 1 : 0);
