/**
 * The lead list at 100,000 leads on the embedded store: filtered, sorted and paginated requests
 * through app.inject (routing, validation, query, count, serialisation), p50 and p95 of 50
 * sequential requests each after 5 of warm-up (issue 9's target: every p95 < 30 ms at 100k leads).
 * The leads are written straight into the lead collection, not through the chain, so the figure is
 * there without waiting for the chain to capture 100k leads.
 * Run: `pnpm bench lead` (BENCH_LIST_LEADS, default 100000). Prints a table, then `BENCH_JSON {...}`.
 */
import { percentile } from '../../../e2e/bench/support.js';
import { median, SOURCE_IDS, startWithLeads, USER_IDS } from './fixtures.js';

const LEADS = Number(process.env.BENCH_LIST_LEADS ?? 100_000);
const WARMUP = 5;
const RUNS = 50;

const SCENARIOS: Record<string, string> = {
  'default (newest first, page 1)': '/api/leads',
  'status + sort by score, page 5': '/api/leads?status=qualified&sort=-score&page=5&limit=50',
  'source + assignee': `/api/leads?sourceId=${SOURCE_IDS[3]}&assignedTo=${USER_IDS[2]}`,
  'source + qualification': `/api/leads?sourceId=${SOURCE_IDS[3]}&qualification=warm`,
  'big source (half the leads) + qualification': `/api/leads?sourceId=${SOURCE_IDS[0]}&qualification=warm`,
  'big source + assignee': `/api/leads?sourceId=${SOURCE_IDS[0]}&assignedTo=${USER_IDS[2]}`,
  'status + qualification + assignee': `/api/leads?status=new&qualification=hot&assignedTo=${USER_IDS[5]}`,
  unassigned: '/api/leads?assignedTo=unassigned&limit=100',
  'duplicates only': '/api/leads?duplicates=only',
  'date range (30 days)': `/api/leads?startDate=${new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10)}&endDate=${new Date().toISOString().slice(0, 10)}`,
  'qualification hot': '/api/leads?qualification=hot',
  'search by name': '/api/leads?search=grace%20hopper',
  'search by e-mail fragment': '/api/leads?search=n4321%40',
  'search by phone digits': '/api/leads?search=%2B1%20415%20000%2012',
  'deep page (page 2000)': '/api/leads?page=2000&limit=50',
  stats: '/api/leads/stats',
  'stats, a 30-day range': `/api/leads/stats?from=${new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10)}`,
};

const loadStarted = performance.now();
const service = await startWithLeads(LEADS);
const loadMs = performance.now() - loadStarted;
const results: Record<string, { medianMs: number; p95Ms: number; total: number }> = {};
for (const [name, url] of Object.entries(SCENARIOS)) {
  const times: number[] = [];
  let total = 0;
  for (let run = 0; run < WARMUP + RUNS; run++) {
    // Signed per request, outside the timing: an identity lives 60 s.
    const headers = await service.auth({ method: 'GET', url });
    const started = performance.now();
    const response = await service.app.inject({ method: 'GET', url, headers });
    if (run >= WARMUP) times.push(performance.now() - started);
    if (response.statusCode !== 200) throw new Error(`${name}: ${response.statusCode} ${response.body}`);
    const body = response.json() as { pagination?: { total: number }; total?: number };
    total = body.pagination?.total ?? body.total ?? 0;
  }
  results[name] = {
    medianMs: Math.round(median(times) * 100) / 100,
    p95Ms:
      Math.round(
        percentile(
          [...times].sort((a, b) => a - b),
          95,
        ) * 100,
      ) / 100,
    total,
  };
}
await service.close();

console.log(
  `lead list over ${LEADS.toLocaleString('en')} leads (embedded store, loaded in ${Math.round(loadMs)} ms)`,
);
console.table(Object.entries(results).map(([scenario, result]) => ({ scenario, ...result })));
console.log(`BENCH_JSON ${JSON.stringify({ leads: LEADS, runs: RUNS, results })}`);
