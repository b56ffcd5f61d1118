import { api, type LeadListQuery, QUALIFICATIONS, STATUSES, unwrap } from '../api/client.js';
import { useStream } from '../api/stream.js';
import { ErrorMessage, Status, useLoad } from '../components/ui.js';

const DAYS = 7;
const TOP_SOURCES = 5;
/** The newest leads read in one call: every figure comes from them while they are all the leads. */
const SAMPLE_SIZE = 100;

type LeadFilter = LeadListQuery & { qualification?: string };

async function listLeads(query: LeadFilter) {
  return unwrap(await api.GET('/api/leads', { params: { query: query as never } }));
}

/** How many leads match: one list call of one row, its pagination total. */
async function countLeads(query: LeadFilter): Promise<number> {
  return (await listLeads({ ...query, limit: 1 })).pagination.total;
}

function lastDays(count: number): Array<{ label: string; start: Date; end: Date }> {
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  return Array.from({ length: count }, (_, index) => {
    const start = new Date(today);
    start.setDate(today.getDate() - (count - 1 - index));
    const end = new Date(start);
    end.setDate(start.getDate() + 1);
    end.setMilliseconds(-1);
    return { label: start.toLocaleDateString(undefined, { month: 'short', day: 'numeric' }), start, end };
  });
}

function countBy<T>(items: T[], key: (item: T) => string | null): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const value = key(item);
    if (value !== null) counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return counts;
}

/**
 * The overview's figures in as few requests as the API allows. GET /api/leads/stats gives the total
 * and the counts per status; the rest comes from the newest SAMPLE_SIZE leads (one list call), exact
 * while they are all the leads (for the chart: all of the last DAYS days). Past that, each figure
 * they cannot give costs one count call (a list call with limit 1), and the top sources are those of
 * the newest leads, as the screen says. 3 requests up to 100 leads, at most 13 beyond.
 */
async function loadOverview() {
  const days = lastDays(DAYS);
  const [stats, sources, newest] = await Promise.all([
    api.GET('/api/leads/stats').then(unwrap),
    api.GET('/api/sources').then(unwrap),
    listLeads({ limit: SAMPLE_SIZE, sort: '-createdAt' }),
  ]);
  const rows = newest.data;
  const complete = newest.pagination.total <= rows.length;
  const oldest = rows.at(-1);
  const windowStart = days[0]?.start ?? new Date();
  const coversDays = complete || (oldest !== undefined && new Date(oldest.createdAt) < windowStart);

  const qualificationCounts = countBy(rows, (lead) => lead.qualification);
  const byQualification = await Promise.all(
    QUALIFICATIONS.map(async (qualification) => ({
      qualification,
      count: complete ? (qualificationCounts.get(qualification) ?? 0) : await countLeads({ qualification }),
    })),
  );
  const perDay = await Promise.all(
    days.map(async (day) => ({
      label: day.label,
      count: coversDays
        ? rows.filter((lead) => {
            const created = new Date(lead.createdAt);
            return created >= day.start && created <= day.end;
          }).length
        : await countLeads({ startDate: day.start.toISOString(), endDate: day.end.toISOString() }),
    })),
  );
  const sourceNames = new Map(sources.map((source) => [source.id, source.name]));
  const rowSourceNames = new Map(rows.map((lead) => [lead.source.id, lead.source.name]));
  const topSources = [...countBy(rows, (lead) => lead.source.id)]
    .map(([id, count]) => ({ id, name: sourceNames.get(id) ?? rowSourceNames.get(id) ?? id, count }))
    .sort((a, b) => b.count - a.count)
    .slice(0, TOP_SOURCES);
  return { stats, byQualification, perDay, topSources, sampled: complete ? undefined : rows.length };
}

export function Overview() {
  const overview = useLoad(loadOverview, []);

  useStream((message) => {
    if (message.type === 'reset') void overview.reload();
  });

  if (overview.error) return <ErrorMessage error={overview.error} />;
  const data = overview.data;
  if (!data) return <Status>Counting the leads…</Status>;
  const maxPerDay = Math.max(1, ...data.perDay.map((day) => day.count));
  const barWidth = 40;
  const chartHeight = 120;

  return (
    <section aria-labelledby="overview-title">
      <div class="toolbar">
        <h1 id="overview-title">Overview</h1>
        <button type="button" onClick={() => void overview.reload()} disabled={overview.loading}>
          Refresh
        </button>
      </div>
      <div class="cards">
        <article class="stat">
          <h2>Total</h2>
          <p class="big">{data.stats.total}</p>
        </article>
        {STATUSES.map((status) => (
          <article class="stat" key={status}>
            <h2>{status}</h2>
            <p class="big">{data.stats.byStatus[status]}</p>
          </article>
        ))}
      </div>
      <div class="cards">
        {data.byQualification.map(({ qualification, count }) => (
          <article class="stat" key={qualification}>
            <h2>
              <span class={`q q-${qualification}`}>{qualification}</span>
            </h2>
            <p class="big">{count}</p>
          </article>
        ))}
      </div>
      <section aria-labelledby="per-day-title">
        <h2 id="per-day-title">Leads per day, last {DAYS} days</h2>
        <svg
          class="chart"
          viewBox={`0 0 ${DAYS * barWidth} ${chartHeight + 20}`}
          role="img"
          aria-labelledby="per-day-title"
        >
          <title>Leads per day, last {DAYS} days</title>
          {data.perDay.map((day, index) => {
            const height = Math.round((day.count / maxPerDay) * chartHeight);
            return (
              <g key={day.label}>
                <title>{`${day.label}: ${day.count}`}</title>
                <rect
                  x={index * barWidth + 6}
                  y={chartHeight - height}
                  width={barWidth - 12}
                  height={height}
                />
                <text x={index * barWidth + barWidth / 2} y={chartHeight + 14} text-anchor="middle">
                  {day.label}
                </text>
              </g>
            );
          })}
        </svg>
        <table class="visually-hidden">
          <caption>Leads per day</caption>
          <tbody>
            {data.perDay.map((day) => (
              <tr key={day.label}>
                <th scope="row">{day.label}</th>
                <td>{day.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="top-sources-title">
        <h2 id="top-sources-title">
          Top sources{data.sampled ? ` of the newest ${data.sampled} leads` : ''}
        </h2>
        <ol>
          {data.topSources.map((source) => (
            <li key={source.id}>
              {source.name}: {source.count}
            </li>
          ))}
        </ol>
      </section>
    </section>
  );
}
