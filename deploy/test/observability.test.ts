import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createGatewayMetrics } from '@lead-capture/gateway';
import { createChainMetrics } from '@lead-capture/kit';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const read = (path: string) => readFile(fileURLToPath(new URL(`../${path}`, import.meta.url)), 'utf8');

/** Every metric name a process can serve: the gateway's and Node's, and the chain's, with histogram series. */
async function knownMetrics(): Promise<Set<string>> {
  const { registry } = createGatewayMetrics();
  createChainMetrics({ registry, logger: pino({ level: 'silent' }), groups: [] });
  const names = new Set<string>();
  for (const metric of await registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
  }
  return names;
}

/** The metric names a PromQL expression reads: identifiers outside label matchers, `by (...)`, ranges and function calls. */
function metricsIn(expr: string): string[] {
  const bare = expr
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without)\s*\([^)]*\)/g, ' ')
    .replace(/"[^"]*"/g, ' ');
  return [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)]
    .map((match) => match[1]!)
    .filter((name) => !['and', 'or', 'unless', 'le', 'offset', 'bool'].includes(name) && !/^\d/.test(name));
}

describe('deploy/grafana and deploy/prometheus', () => {
  it('the dashboard parses and every panel reads metrics the processes serve', async () => {
    const known = await knownMetrics();
    const dashboard = JSON.parse(await read('grafana/lead-capture-chain.json'));
    const exprs: string[] = dashboard.panels.flatMap((panel: { targets: { expr: string }[] }) =>
      panel.targets.map((target) => target.expr),
    );
    expect(exprs.length).toBeGreaterThan(5);
    expect(new Set(dashboard.panels.map((panel: { id: number }) => panel.id)).size).toBe(
      dashboard.panels.length,
    );
    const unknown = exprs.flatMap(metricsIn).filter((name) => !known.has(name));
    expect(unknown).toEqual([]);
  });

  it('the alert rules parse, read served metrics, and cover a worker falling behind, dead letters and the outbox', async () => {
    const known = await knownMetrics();
    const rules = parse(await read('prometheus/alerts.yml')).groups.flatMap(
      (group: { rules: { alert: string; expr: string }[] }) => group.rules,
    ) as { alert: string; expr: string }[];
    const unknown = rules.flatMap((rule) => metricsIn(rule.expr)).filter((name) => !known.has(name));
    expect(unknown).toEqual([]);
    const read_ = rules.map((rule) => rule.expr).join('\n');
    for (const metric of [
      'bus_oldest_unprocessed_event_age_seconds',
      'bus_dead_letters',
      'outbox_pending_events',
      'bus_queue_ready_messages',
    ]) {
      expect(read_).toContain(metric);
    }
    // The extraction is not vacuous: a misspelt metric is caught.
    expect(metricsIn('max by (group) (bus_dead_leters)').filter((name) => !known.has(name))).toEqual([
      'bus_dead_leters',
    ]);
  });
});
