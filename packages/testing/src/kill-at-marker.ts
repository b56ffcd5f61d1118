import { spawn } from 'node:child_process';

/**
 * Runs `node --import tsx <script> ...args` and SIGKILLs it (by its own pid) as soon as its
 * standard output contains `marker`: the kill -9 of a crash test, at the moment the child names.
 * Resolves with everything the child printed; rejects when it exits any other way first.
 */
export function killAtMarker(script: string, args: readonly string[], marker: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(marker)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      if (signal === 'SIGKILL' && output.includes(marker)) resolve(output);
      else reject(new Error(`child exited before ${marker}: ${output}`));
    });
  });
}
