/**
 * The load generator of `pnpm bench e2e`, a process of its own so it never shares an event loop with
 * the server under test: autocannon POSTs a unique lead in every request (JSON), for a fixed
 * duration, then prints `LOAD_RESULT {...}`. Its one argument is a JSON `LoadSpec`.
 */
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  connections: number;
  durationS: number;
  /** Put in every e-mail, so runs and phases never share one. */
  tag: string;
  /** Area code of the phone numbers (unique per request within a run). */
  areaCode: string;
}

export interface LoadResult {
  startedAt: number;
  endedAt: number;
  durationS: number;
  requests: number;
  reqPerSec: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyAvgMs: number;
  statusCodes: Record<string, number>;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson'];
let sequence = 0;

/** A lead no other request of the run has: its own e-mail and phone number. */
function nextLead(): string {
  const n = ++sequence;
  const company = `acme${n % 97}`;
  return JSON.stringify({
    email: `${spec.tag}.${n}@${company}.example`,
    firstName: FIRST[n % FIRST.length],
    lastName: LAST[(n >> 3) % LAST.length],
    phone: `+1 ${spec.areaCode} ${2_000_000 + (n % 8_000_000)}`,
    company: `Acme ${n % 97}`,
  });
}

const startedAt = Date.now();
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.durationS,
  headers: { 'content-type': 'application/json' },
  requests: [
    {
      method: 'POST',
      setupRequest: (request) => ({ ...request, body: nextLead() }),
    },
  ],
});
const endedAt = Date.now();
const statusCodes: Record<string, number> = {};
for (const [code, count] of Object.entries(result.statusCodeStats ?? {}))
  statusCodes[code] = count.count ?? 0;
const output: LoadResult = {
  startedAt,
  endedAt,
  durationS: result.duration,
  requests: result.requests.total,
  reqPerSec: result.requests.total / result.duration,
  ok2xx: result['2xx'],
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  latencyP50Ms: result.latency.p50,
  latencyP99Ms: result.latency.p99,
  latencyAvgMs: result.latency.average,
  statusCodes,
};
process.stdout.write(`LOAD_RESULT ${JSON.stringify(output)}\n`);
