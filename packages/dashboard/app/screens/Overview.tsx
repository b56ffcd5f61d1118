import { api, QUALIFICATIONS, STATUSES, unwrap } from '../api/client.js';
import { type StreamMessage, useStream } from '../api/stream.js';
import { NoLeadsYet } from '../components/empty.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, Status, useLoad, useThrottled } from '../components/ui.js';
import { useLocation } from '../router.js';
import { ConversionBySource, Funnel, RangeForm, readRange } from './OverviewRange.js';

/** The days the chart shows (UTC days, as the stats count them). */
const DAYS = 30;
/** Live refreshes: at most one stats request per this interval, however many events arrive. */
const REFRESH_INTERVAL_MS = 1000;
/** About this many labels under the bars (always one under the last day's), so they stay readable. */
const LABELS = 6;

/** The lead.updated changes that move a figure of the overview (notes, tags, stage... move none). */
const FIGURE_FIELDS = ['status', 'qualification', 'sourceId', 'createdAt'];

/** Whether a stream event may change a count the overview shows. */
function changesFigures(message: StreamMessage): boolean {
  switch (message.type) {
    case 'lead.captured':
    case 'lead.scored':
    case 'lead.deleted':
    case 'lead.merged':
      return true;
    case 'lead.updated': {
      const changes = message.data.changes;
      if (!changes || typeof changes !== 'object') return true;
      return FIGURE_FIELDS.some((field) => field in changes);
    }
    default:
      return false;
  }
}

/** "Mar 4" (or "Mar 4, 2024") for a UTC day "2024-03-04", shown as that day wherever the browser is. */
function dayLabel(date: string, withYear = false): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString(undefined, {
    ...(withYear ? { year: 'numeric' } : {}),
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}

/**
 * The overview: every figure from one GET /api/leads/stats (counted by the server's indexes, so one
 * request at any size), asked again when the live stream says leads were captured, scored, changed
 * status, deleted or merged — at most once a second — and after the stream lost events.
 */
export function Overview() {
  const { query } = useLocation();
  const range = readRange(query);
  const rangeKey = range ? `${range.from}/${range.to}` : '';
  const overview = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/leads/stats', {
          params: { query: range ? { from: range.from, to: range.to } : { days: DAYS } },
        }),
      ),
    [rangeKey],
  );
  const refresh = useThrottled(() => void overview.reload(), REFRESH_INTERVAL_MS);

  useStream((message) => {
    if (message.type === 'reset') void overview.reload();
    else if (changesFigures(message)) refresh();
  });

  const data = overview.data;
  if (!data) {
    // The range stays editable when the one in the URL was refused.
    return (
      <TitledSection id="overview-title" title="Overview">
        <RangeForm key={rangeKey} range={range} />
        {overview.error ? <ErrorMessage error={overview.error} /> : <Status>Counting the leads…</Status>}
      </TitledSection>
    );
  }
  const scored = QUALIFICATIONS.reduce((sum, qualification) => sum + data.byQualification[qualification], 0);
  const maxPerDay = Math.max(1, ...data.perDay.map((day) => day.count));
  const barWidth = 24;
  const chartHeight = 120;
  const days = data.perDay.length;
  const labelEvery = Math.max(1, Math.ceil(days / LABELS));
  const period = data.range
    ? `${dayLabel(data.range.from, true)} – ${dayLabel(data.range.to, true)}`
    : `last ${days} days`;

  return (
    <TitledSection
      id="overview-title"
      busy={overview.loading}
      title="Overview"
      actions={
        <button type="button" onClick={() => void overview.reload()} disabled={overview.loading}>
          Refresh
        </button>
      }
    >
      <RangeForm key={rangeKey} range={range} />
      <p class="muted">
        {data.range
          ? `Leads created ${period} (UTC days). `
          : 'All leads; the chart shows the last 30 days. '}
        Updated live as leads arrive and change.
      </p>
      <ErrorMessage error={overview.error} />
      {data.total === 0 && !data.range && <NoLeadsYet />}
      <section class="cards" aria-label="Leads per status">
        <article class="stat" data-figure="total">
          <h2>Total</h2>
          <p class="big">{data.total}</p>
        </article>
        {STATUSES.map((status) => (
          <article class="stat" key={status} data-figure={`status-${status}`}>
            <h2>{status}</h2>
            <p class="big">{data.byStatus[status]}</p>
          </article>
        ))}
      </section>
      <section class="cards" aria-label="Leads per qualification">
        {QUALIFICATIONS.map((qualification) => (
          <article class="stat" key={qualification} data-figure={`qualification-${qualification}`}>
            <h2>
              <span class={`q q-${qualification}`}>{qualification}</span>
            </h2>
            <p class="big">{data.byQualification[qualification]}</p>
          </article>
        ))}
        <article class="stat" data-figure="not-scored">
          <h2>Not scored yet</h2>
          <p class="big">{Math.max(0, data.total - scored)}</p>
        </article>
      </section>
      <TitledSection id="per-day-title" level={2} title={<>Leads per day, {period} (UTC)</>}>
        <svg
          class="chart"
          // Room on the right for today's label, centred under the last bar.
          viewBox={`0 0 ${days * barWidth + barWidth} ${chartHeight + 20}`}
          role="img"
          aria-labelledby="per-day-title"
        >
          <title>Leads per day, {period} (UTC)</title>
          {data.perDay.map((day, index) => {
            const height = Math.round((day.count / maxPerDay) * chartHeight);
            const labelled = (days - 1 - index) % labelEvery === 0;
            return (
              <g key={day.date}>
                <title>{`${dayLabel(day.date)}: ${day.count}`}</title>
                <rect
                  x={index * barWidth + 3}
                  y={chartHeight - height}
                  width={barWidth - 6}
                  height={height}
                />
                {labelled && (
                  <text x={index * barWidth + barWidth / 2} y={chartHeight + 14} text-anchor="middle">
                    {dayLabel(day.date)}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
        {/* In a hidden box, not a hidden table: a table keeps its rows' height, 365 of them a long empty page. */}
        <div class="visually-hidden">
          <table>
            <caption>Leads per day</caption>
            <tbody>
              {data.perDay.map((day) => (
                <tr key={day.date}>
                  <th scope="row">{dayLabel(day.date)}</th>
                  <td>{day.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </TitledSection>
      <Funnel byStatus={data.byStatus} total={data.total} />
      <ConversionBySource sources={data.bySource} />
      <TitledSection id="top-sources-title" level={2} title="Top sources">
        {data.bySource.length === 0 ? (
          <p class="muted">No source has sent a lead yet.</p>
        ) : (
          <ol>
            {data.bySource.map((source) => (
              <li key={source.id} data-source-id={source.id}>
                {source.name}
                {source.deleted ? ' (deleted)' : ''}: {source.count}
              </li>
            ))}
          </ol>
        )}
      </TitledSection>
    </TitledSection>
  );
}
