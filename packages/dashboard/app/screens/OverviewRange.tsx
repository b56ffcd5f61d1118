import { useState } from 'preact/hooks';
import type { Status } from '../api/client.js';
import { TextField } from '../components/fields.js';
import { Form } from '../components/forms.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage } from '../components/ui.js';
import { updateQuery } from '../router.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 24 * 3600 * 1000;
/** The longest range the stats answer. */
const MAX_DAYS = 365;

export interface DayRange {
  from: string;
  to: string;
}

function utcToday(): string {
  return new Date().toISOString().slice(0, 10);
}

function daysBefore(day: string, count: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - count * DAY_MS).toISOString().slice(0, 10);
}

/** The overview's range from the URL (`from` / `to`, UTC days); none: all leads. */
export function readRange(query: URLSearchParams): DayRange | undefined {
  const from = query.get('from') ?? '';
  const to = query.get('to') ?? '';
  if (!DAY.test(from) && !DAY.test(to)) return undefined;
  const end = DAY.test(to) ? to : utcToday();
  return { from: DAY.test(from) ? from : daysBefore(end, 29), to: end };
}

/** What is wrong with a range the user typed, in words; undefined when it can be asked. */
function rangeProblem(from: string, to: string): string | undefined {
  if (!DAY.test(from) || !DAY.test(to)) return 'Choose both a first and a last day.';
  if (from > to) return 'The first day must not be after the last.';
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > MAX_DAYS)
    return `A range covers at most ${MAX_DAYS} days.`;
  return undefined;
}

const PRESETS = [7, 30, 90] as const;

/** The date range of the overview, kept in the URL: presets, or a first and last day. */
export function RangeForm({ range }: { range: DayRange | undefined }) {
  const [from, setFrom] = useState(range?.from ?? '');
  const [to, setTo] = useState(range?.to ?? '');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const apply = (next: DayRange | undefined) => {
    setProblem(undefined);
    setFrom(next?.from ?? '');
    setTo(next?.to ?? '');
    updateQuery({ from: next?.from, to: next?.to });
  };
  return (
    <Form
      class="filters overview-range"
      aria-label="Date range"
      onSubmit={() => {
        const found = rangeProblem(from, to);
        if (found) setProblem(found);
        else apply({ from, to });
      }}
    >
      <TextField label="From" type="date" name="from" value={from} onValue={setFrom} />
      <TextField label="To" type="date" name="to" value={to} onValue={setTo} />
      <button type="submit">Apply range</button>
      {PRESETS.map((days) => (
        <button
          key={days}
          type="button"
          class="ghost"
          onClick={() => apply({ from: daysBefore(utcToday(), days - 1), to: utcToday() })}
        >
          Last {days} days
        </button>
      ))}
      <button type="button" class="ghost" disabled={!range} onClick={() => apply(undefined)}>
        All time
      </button>
      <ErrorMessage error={problem} />
    </Form>
  );
}

/**
 * The funnel steps, from the lead statuses: a lead counts at a step when its status is that one or
 * a later one. Closed leads left the funnel at a step their status no longer says, so they count as
 * captured only (and are shown beside it).
 */
const FUNNEL: Array<{ label: string; statuses: Status[] }> = [
  { label: 'Captured', statuses: ['new', 'contacted', 'qualified', 'converted', 'closed'] },
  { label: 'Contacted', statuses: ['contacted', 'qualified', 'converted'] },
  { label: 'Qualified', statuses: ['qualified', 'converted'] },
  { label: 'Won', statuses: ['converted'] },
];

function percent(part: number, whole: number): string {
  return whole === 0 ? '—' : `${Math.round((part / whole) * 1000) / 10}%`;
}

export function Funnel({ byStatus, total }: { byStatus: Record<Status, number>; total: number }) {
  const steps = FUNNEL.map((step) => ({
    label: step.label,
    count: step.statuses.reduce((sum, status) => sum + byStatus[status], 0),
  }));
  const width = 400;
  const barHeight = 28;
  return (
    <TitledSection id="funnel-title" level={2} title="Funnel">
      <svg
        class="funnel"
        viewBox={`0 0 ${width} ${steps.length * (barHeight + 6)}`}
        role="img"
        aria-labelledby="funnel-title"
      >
        <title>{steps.map((step) => `${step.label}: ${step.count}`).join(', ')}</title>
        {steps.map((step, index) => {
          const barWidth = total === 0 ? 0 : Math.max(2, Math.round((step.count / total) * width));
          return (
            <rect
              key={step.label}
              x={(width - barWidth) / 2}
              y={index * (barHeight + 6)}
              width={barWidth}
              height={barHeight}
            />
          );
        })}
      </svg>
      <table class="funnel-table">
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Leads</th>
            <th scope="col">Of captured</th>
            <th scope="col">From the step before</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((step, index) => (
            <tr key={step.label} data-step={step.label.toLowerCase()}>
              <th scope="row">{step.label}</th>
              <td class="number">{step.count}</td>
              <td class="number">{percent(step.count, total)}</td>
              <td class="number">{index === 0 ? '' : percent(step.count, steps[index - 1]!.count)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">
        Steps from each lead's current status; {byStatus.closed} closed{' '}
        {byStatus.closed === 1 ? 'lead' : 'leads'} counted as captured only.
      </p>
    </TitledSection>
  );
}

export function ConversionBySource({
  sources,
}: {
  sources: Array<{ id: string; name: string; deleted: boolean; count: number; converted: number }>;
}) {
  return (
    <TitledSection id="conversion-title" level={2} title="Conversion by source">
      {sources.length === 0 ? (
        <p class="muted">No source has sent a lead in this period.</p>
      ) : (
        <table class="conversion">
          <thead>
            <tr>
              <th scope="col">Source</th>
              <th scope="col">Leads</th>
              <th scope="col">Won</th>
              <th scope="col">Conversion</th>
            </tr>
          </thead>
          <tbody>
            {sources.map((source) => (
              <tr key={source.id} data-source-id={source.id}>
                <th scope="row">
                  {source.name}
                  {source.deleted ? ' (deleted)' : ''}
                </th>
                <td class="number">{source.count}</td>
                <td class="number">{source.converted}</td>
                <td class="number">{percent(source.converted, source.count)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </TitledSection>
  );
}
