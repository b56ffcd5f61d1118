import { CSV_IMPORT_SOURCE, LEAD_STATUSES, QUALIFICATIONS } from '@lead-capture/contracts';
import type { FastifyInstance } from 'fastify';
import type { LeadCollections } from '../../store.js';
import type { LeadRouteDeps } from '../deps.js';
import {
  errorResponses,
  STATS_QUERY_SCHEMA,
  STATS_RESPONSE_SCHEMA,
  STATS_TOP_SOURCES,
  type StatsQuery,
} from '../schemas.js';

const DAY_MS = 24 * 3600 * 1000;

export interface SourceCount {
  id: string;
  name: string;
  deleted: boolean;
  count: number;
}

/** The UTC days of the last `days` days, oldest first, today (UTC) last: [date, start, next day's start]. */
function utcDays(days: number, now: number): Array<{ date: string; from: string; to: string }> {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return Array.from({ length: days }, (_, index) => {
    const start = today - (days - 1 - index) * DAY_MS;
    const from = new Date(start).toISOString();
    return { date: from.slice(0, 10), from, to: new Date(start + DAY_MS).toISOString() };
  });
}

type SourceEntry = Omit<SourceCount, 'name'> & { name: string | null };

/**
 * How many leads each source the lead service knows has: its read model (deleted sources too, their
 * leads are kept) and the CSV import source. One count on the sourceId index each.
 */
async function knownSourceCounts({
  leads,
  sources,
}: Pick<LeadCollections, 'leads' | 'sources'>): Promise<SourceEntry[]> {
  const known = await sources.find({});
  const candidates = [
    ...known.map((source) => ({ id: source._id, name: source.name, deleted: source.deleted })),
    ...(known.some((source) => source._id === CSV_IMPORT_SOURCE.id)
      ? []
      : [{ id: CSV_IMPORT_SOURCE.id, name: CSV_IMPORT_SOURCE.name, deleted: false }]),
  ];
  const counts = await Promise.all(candidates.map((source) => leads.countDocuments({ sourceId: source.id })));
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
): Promise<SourceCount[]> {
  let unknown: SourceEntry[] = [];
  const counted = known.reduce((sum, source) => sum + source.count, 0);
  const elsewhere = { sourceId: { $nin: known.map((source) => source.id) } };
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
 * sources and the leads created per UTC day of the last `days` days (default 30, zeros included).
 *
 * Every figure is answered by indexes, never by reading the leads: a count on the status,
 * qualification and sourceId indexes each, and one createdAt range count per day (a COUNT over an
 * index range in the embedded store, a count scan in MongoDB). Every lead has one of the five
 * statuses, so their sum is the total without a count over everything.
 */
export function registerStatsRoute(app: FastifyInstance, { context }: LeadRouteDeps): void {
  const { leads } = context.collections;
  app.get<{ Querystring: StatsQuery }>(
    '/api/leads/stats',
    {
      schema: {
        querystring: STATS_QUERY_SCHEMA,
        response: { 200: STATS_RESPONSE_SCHEMA, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const days = utcDays(request.query.days, Date.now());
      const [byStatus, byQualification, sources, perDay] = await Promise.all([
        Promise.all(LEAD_STATUSES.map((status) => leads.countDocuments({ status }))),
        Promise.all(QUALIFICATIONS.map((qualification) => leads.countDocuments({ qualification }))),
        knownSourceCounts(context.collections),
        Promise.all(days.map((day) => leads.countDocuments({ createdAt: { $gte: day.from, $lt: day.to } }))),
      ]);
      const total = byStatus.reduce((sum, count) => sum + count, 0);
      const bySource = await topSources(context.collections, sources, total, STATS_TOP_SOURCES);
      return {
        total,
        byStatus: Object.fromEntries(LEAD_STATUSES.map((status, i) => [status, byStatus[i]])),
        byQualification: Object.fromEntries(
          QUALIFICATIONS.map((qualification, i) => [qualification, byQualification[i]]),
        ),
        bySource,
        perDay: days.map((day, i) => ({ date: day.date, count: perDay[i] })),
      };
    },
  );
}
