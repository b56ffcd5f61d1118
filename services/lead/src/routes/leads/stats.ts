import { CSV_IMPORT_SOURCE, LEAD_STATUSES, QUALIFICATIONS } from '@lead-capture/contracts';
import { badRequest, errorResponses } from '@lead-capture/kit';
import type { LeadCollections } from '../../store.js';
import { readRoute } from '../lead-route.js';
import {
  STATS_MAX_DAYS,
  STATS_QUERY_SCHEMA,
  STATS_RESPONSE_SCHEMA,
  STATS_TOP_SOURCES,
  type StatsQuery,
} from '../schemas/stats.js';

const DAY_MS = 24 * 3600 * 1000;

export interface SourceCount {
  id: string;
  name: string;
  deleted: boolean;
  count: number;
}

interface UtcDay {
  date: string;
  from: string;
  to: string;
}

/** `count` UTC days from the one starting at `firstDayStart` (ms), oldest first: [date, start, next day's start]. */
function utcDays(firstDayStart: number, count: number): UtcDay[] {
  return Array.from({ length: count }, (_, index) => {
    const start = firstDayStart + index * DAY_MS;
    const from = new Date(start).toISOString();
    return { date: from.slice(0, 10), from, to: new Date(start + DAY_MS).toISOString() };
  });
}

/** The start (ms) of a YYYY-MM-DD UTC day, or a 400 when there is no such day (2026-02-31). */
function dayStart(name: string, day: string): number {
  const start = Date.parse(`${day}T00:00:00.000Z`);
  if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== day) {
    throw badRequest(`${name} must be a date (YYYY-MM-DD)`);
  }
  return start;
}

/** What createdAt a figure counts (nothing: all leads), and the days perDay covers. */
interface StatsWindow {
  days: UtcDay[];
  createdAt?: { $gte: string; $lt: string };
  range?: { from: string; to: string };
}

/**
 * The last `days` UTC days, today last, over all leads; or, with from and/or to, the range's days
 * and only the leads created in it.
 */
function statsWindow(query: StatsQuery, now: number): StatsWindow {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  if (query.from === undefined && query.to === undefined) {
    return { days: utcDays(today - (query.days - 1) * DAY_MS, query.days) };
  }
  const last = query.to === undefined ? today : dayStart('to', query.to);
  const first = query.from === undefined ? last - (query.days - 1) * DAY_MS : dayStart('from', query.from);
  if (first > last) throw badRequest('from must not be after to');
  const count = Math.round((last - first) / DAY_MS) + 1;
  if (count > STATS_MAX_DAYS) throw badRequest(`The range must be at most ${STATS_MAX_DAYS} days`);
  const days = utcDays(first, count);
  return {
    days,
    createdAt: { $gte: days[0]!.from, $lt: days.at(-1)!.to },
    range: { from: days[0]!.date, to: days.at(-1)!.date },
  };
}

type SourceEntry = Omit<SourceCount, 'name'> & { name: string | null };
/** The createdAt condition of a date range, or none. */
type Scope = { createdAt?: StatsWindow['createdAt'] };

/**
 * How many leads each source the lead service knows has: its read model (deleted sources too, their
 * leads are kept) and the CSV import source. One count on the sourceId index each.
 */
async function knownSourceCounts(
  { leads, sources }: Pick<LeadCollections, 'leads' | 'sources'>,
  scope: Scope,
): Promise<SourceEntry[]> {
  const known = await sources.find({});
  const candidates = [
    ...known.map((source) => ({ id: source._id, name: source.name, deleted: source.deleted })),
    ...(known.some((source) => source._id === CSV_IMPORT_SOURCE.id)
      ? []
      : [{ id: CSV_IMPORT_SOURCE.id, name: CSV_IMPORT_SOURCE.name, deleted: false }]),
  ];
  const counts = await Promise.all(
    candidates.map((source) => leads.countDocuments({ sourceId: source.id, ...scope })),
  );
  return candidates.map((source, index) => ({ ...source, count: counts[index] ?? 0 }));
}

/**
 * The sources with the most leads, the most first (ties by name, then id), at most `limit`, those
 * without leads left out. Leads of sources the read model does not hold (yet) are grouped by one
 * aggregation over just those leads, and only when the known sources' counts fall short of the
 * total (a count on the index first: the aggregation reads the leads it groups).
 */
async function topSources(
  { leads }: Pick<LeadCollections, 'leads'>,
  known: SourceEntry[],
  total: number,
  limit: number,
  scope: Scope,
): Promise<SourceCount[]> {
  let unknown: SourceEntry[] = [];
  const counted = known.reduce((sum, source) => sum + source.count, 0);
  const elsewhere = { sourceId: { $nin: known.map((source) => source.id) }, ...scope };
  if (counted < total && (await leads.countDocuments(elsewhere)) > 0) {
    const groups = await leads.aggregate<{ _id: string; count: number; name: string }>([
      { $match: elsewhere },
      { $group: { _id: '$sourceId', count: { $sum: 1 }, name: { $last: '$sourceName' } } },
    ]);
    unknown = groups.map((group) => ({
      id: group._id,
      name: group.name,
      deleted: false,
      count: group.count,
    }));
  }
  const ranked = [...known, ...unknown]
    .filter((source) => source.count > 0)
    .sort((a, b) => b.count - a.count || compareText(a.name ?? '', b.name ?? '') || compareText(a.id, b.id))
    .slice(0, limit);
  // A source known by id only (its source.created not applied yet): the name its leads were captured with.
  return Promise.all(
    ranked.map(async (source) => ({
      ...source,
      name:
        source.name ??
        (await leads.findOne({ sourceId: source.id }, { projection: { sourceName: 1 } }))?.sourceName ??
        '',
    })),
  );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * GET /api/leads/stats: how many leads in each status (all five, zeros included) and their sum, as the
 * contract has it; plus, as extensions, the counts per qualification (zeros included), the top
 * sources with how many of their leads are converted, and the leads created per UTC day of the last
 * `days` days (default 30, zeros included). With `from` / `to` (UTC days), every figure counts only
 * the leads created in that range, and perDay covers its days.
 *
 * Every figure is answered by indexes, never by reading the leads: a count on the status,
 * qualification and sourceId indexes each, and one createdAt range count per day (a COUNT over an
 * index range in the embedded store, a count scan in MongoDB). Every lead has one of the five
 * statuses, so their sum is the total without a count over everything.
 */
export const registerStatsRoute = readRoute<{ Querystring: StatsQuery }>({
  url: '/api/leads/stats',
  querystring: STATS_QUERY_SCHEMA,
  response: { 200: STATS_RESPONSE_SCHEMA, ...errorResponses(400, 401, 429) },
  read: async (request, { context }) => {
    const { leads } = context.collections;
    const { days, createdAt, range } = statsWindow(request.query, context.now().getTime());
    const scope: Scope = createdAt ? { createdAt } : {};
    const [byStatus, byQualification, sources, perDay] = await Promise.all([
      Promise.all(LEAD_STATUSES.map((status) => leads.countDocuments({ status, ...scope }))),
      Promise.all(QUALIFICATIONS.map((qualification) => leads.countDocuments({ qualification, ...scope }))),
      knownSourceCounts(context.collections, scope),
      Promise.all(days.map((day) => leads.countDocuments({ createdAt: { $gte: day.from, $lt: day.to } }))),
    ]);
    const total = byStatus.reduce((sum, count) => sum + count, 0);
    const ranked = await topSources(context.collections, sources, total, STATS_TOP_SOURCES, scope);
    const converted = await Promise.all(
      ranked.map((source) => leads.countDocuments({ sourceId: source.id, status: 'converted', ...scope })),
    );
    return {
      ...(range ? { range } : {}),
      total,
      byStatus: Object.fromEntries(LEAD_STATUSES.map((status, i) => [status, byStatus[i]])),
      byQualification: Object.fromEntries(
        QUALIFICATIONS.map((qualification, i) => [qualification, byQualification[i]]),
      ),
      bySource: ranked.map((source, i) => ({ ...source, converted: converted[i] ?? 0 })),
      perDay: days.map((day, i) => ({ date: day.date, count: perDay[i] })),
    };
  },
});
