/**
 * `pnpm bench`: runs every benchmark script (packages/<name>/bench/*.bench.ts and the same under
 * services/) one after another, so they do not compete for the CPU, and prints what each measured.
 * A benchmark prints its human-readable table and ends with one line `BENCH_JSON {...}`; the
 * collected results are also written to .bench/results.json for comparison between runs.
 * `pnpm bench docstore` runs only the benchmarks whose path contains "docstore".
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const filter = process.argv[2];

async function findBenchmarks(): Promise<string[]> {
  const found: string[] = [];
  for (const area of ['packages', 'services']) {
    for (const name of await readdir(join(root, area))) {
      const benchDir = join(root, area, name, 'bench');
      const files = await readdir(benchDir).catch(() => []);
      for (const file of files) if (file.endsWith('.bench.ts')) found.push(join(benchDir, file));
    }
  }
  return found.filter((file) => !filter || file.includes(filter)).sort();
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
