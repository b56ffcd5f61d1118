/**
 * The CSV export at 100,000 leads on the embedded store, over a real HTTP connection: time to the
 * last byte, and how much the process's resident memory grew while streaming (sampled every 10 ms)
 * compared with the size of the file: streaming keeps it flat, buffering would grow with the file.
 * Run: `pnpm bench lead`. Prints a summary, then `BENCH_JSON {...}` as the last line.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startWithLeads } from './fixtures.js';

const LEADS = 100_000;
const MB = 1024 * 1024;

const service = await startWithLeads(LEADS);
await service.app.listen({ host: '127.0.0.1', port: 0 });
const { port } = service.app.server.address() as AddressInfo;
const headers = await service.auth({ method: 'GET', url: '/api/leads/export' });

async function download(): Promise<{ bytes: number; rows: number; ms: number; peakRss: number }> {
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 10);
  const started = performance.now();
  try {
    return await new Promise((resolve, reject) => {
      const call = request({ host: '127.0.0.1', port, path: '/api/leads/export', headers }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`export answered ${response.statusCode}`));
        let bytes = 0;
        let rows = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          for (const byte of chunk) if (byte === 0x0a) rows++;
        });
        response.on('end', () =>
          resolve({ bytes, rows: rows - 1, ms: performance.now() - started, peakRss }),
        );
        response.on('error', reject);
      });
      call.on('error', reject);
      call.end();
    });
  } finally {
    clearInterval(sampler);
  }
}

// A warm-up run first, so code loading and JIT do not count as the export's memory.
await download();
await new Promise((resolve) => setTimeout(resolve, 500));
const baselineRss = process.memoryUsage.rss();
const result = await download();
await service.close();

if (result.rows !== LEADS) throw new Error(`expected ${LEADS} rows, got ${result.rows}`);
const summary = {
  leads: LEADS,
  rows: result.rows,
  fileMb: Math.round((result.bytes / MB) * 10) / 10,
  ms: Math.round(result.ms),
  baselineRssMb: Math.round(baselineRss / MB),
  peakRssDeltaMb: Math.round(((result.peakRss - baselineRss) / MB) * 10) / 10,
};
console.log(
  `export of ${LEADS.toLocaleString('en')} leads: ${summary.fileMb} MB in ${summary.ms} ms; ` +
    `resident memory grew by at most ${summary.peakRssDeltaMb} MB (baseline ${summary.baselineRssMb} MB)`,
);
console.log(`BENCH_JSON ${JSON.stringify(summary)}`);
