import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, inPath, type LeadListItem, type Pipeline, unwrap } from '../api/client.js';
import { rowFromCaptured } from '../api/live-leads.js';
import { type StreamEvent, useStream } from '../api/stream.js';
import { Options } from '../components/fields.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, fullName, Status, useAction, useLoad, useThrottled } from '../components/ui.js';
import { updateQuery, useLocation } from '../router.js';

/** Cards a column loads at once: its first page on opening, then one more per "Load more". */
const COLUMN_PAGE_SIZE = 25;

/** One column: the cards loaded so far (newest first), the stage's true count, the list's paging. */
interface Column {
  cards: BoardLead[];
  /** How many leads the stage holds (the list's pagination.total), kept current from the stream. */
  total: number;
  /**
   * How far into the stage's list (newest first) the loaded cards reach, less the cards that left
   * since: never past the true position, so "Load more" may ask an overlapping page (its known cards
   * are dropped) but never skips a lead.
   */
  offset: number;
}
type Columns = Record<string, Column>;

/** A stage's leads, newest first, duplicates aside: `GET /api/leads?pipelineId&stageId`. */
async function stagePage(pipelineId: string, stageId: string, page: number, limit = COLUMN_PAGE_SIZE) {
  const query = { pipelineId, stageId, duplicates: 'exclude', limit, page } as const;
  return unwrap(await api.GET('/api/leads', { params: { query } }));
}

const byNewest = (a: BoardLead, b: BoardLead) =>
  a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1;

function withCard(column: Column | undefined, card: BoardLead, counted: boolean): Column | undefined {
  if (!column || column.cards.some((lead) => lead.id === card.id)) return column;
  return {
    ...column,
    cards: [...column.cards, card].sort(byNewest),
    total: column.total + (counted ? 1 : 0),
  };
}

function withoutCard(column: Column | undefined, leadId: string): Column | undefined {
  if (!column?.cards.some((lead) => lead.id === leadId)) return column;
  return {
    cards: column.cards.filter((lead) => lead.id !== leadId),
    total: Math.max(0, column.total - 1),
    offset: Math.max(0, column.offset - 1),
  };
}

/** The column holding a lead's card, if it is loaded. */
function columnOf(columns: Columns | undefined, leadId: string): string | undefined {
  return Object.entries(columns ?? {}).find(([, column]) =>
    column.cards.some((lead) => lead.id === leadId),
  )?.[0];
}

/**
 * The pipeline board: a column per stage of the chosen pipeline (kept in the URL, `?pipeline=`),
 * each with the stage's true count and its newest leads (duplicates aside), more on "Load more".
 * Each column is one list call (`pipelineId` and `stageId` filters: pagination.total is the count,
 * counted by the lead service on an index); list items carry their pipeline and stage. Kept current
 * from the stream. Dragging a card to another column, or choosing a stage in its "Move to" menu
 * (keyboard and touch), moves the lead with PUT /api/leads/<id>/stage.
 */
export function Board() {
  const { query } = useLocation();
  const pipelines = useLoad(async () => unwrap(await api.GET('/api/pipelines')), []);
  const pipeline: Pipeline | undefined =
    pipelines.data?.find((candidate) => candidate.id === query.get('pipeline')) ??
    pipelines.data?.find((candidate) => candidate.isDefault) ??
    pipelines.data?.[0];
  const shownPipelineId = pipeline?.id;
  const stageIds = (pipeline?.stages ?? []).map((stage) => stage.id).join(',');

  const columns = useLoad<Columns>(async () => {
    if (!shownPipelineId || !stageIds) return {};
    const ids = stageIds.split(',');
    const pages = await Promise.all(ids.map((stageId) => stagePage(shownPipelineId, stageId, 1)));
    return Object.fromEntries(
      ids.map((stageId, index) => {
        const { data, pagination } = pages[index]!;
        return [stageId, { cards: data, total: pagination.total, offset: data.length }];
      }),
    );
  }, [shownPipelineId, stageIds]);
  const setColumns = columns.setData;
  const current = useRef(columns.data);
  current.current = columns.data;

  // A lead the board has no card for changed where it is (deleted, merged, moved from a column's
  // unloaded part or another pipeline): each stage's count is asked again (a one-item page each).
  const refreshCounts = useThrottled(() => {
    if (!shownPipelineId || !stageIds) return;
    for (const stageId of stageIds.split(',')) {
      void stagePage(shownPipelineId, stageId, 1, 1).then(
        ({ pagination }) =>
          setColumns((all) =>
            all?.[stageId] ? { ...all, [stageId]: { ...all[stageId]!, total: pagination.total } } : all,
          ),
        () => undefined,
      );
    }
  }, 2000);

  const [loadingMore, setLoadingMore] = useState<string | undefined>(undefined);
  const loadMore = useCallback(
    async (stageId: string) => {
      const column = current.current?.[stageId];
      if (!shownPipelineId || !column) return;
      setLoadingMore(stageId);
      try {
        let page = Math.floor(column.offset / COLUMN_PAGE_SIZE) + 1;
        const known = new Set(column.cards.map((lead) => lead.id));
        // An overlapping page (cards arrived since) may bring nothing new: then the next one.
        for (;;) {
          const { data, pagination } = await stagePage(shownPipelineId, stageId, page);
          const fresh = data.filter((lead) => !known.has(lead.id));
          const offset = (page - 1) * COLUMN_PAGE_SIZE + data.length;
          setColumns((all) => {
            const latest = all?.[stageId];
            if (!latest) return all;
            const ids = new Set(latest.cards.map((lead) => lead.id));
            return {
              ...all,
              [stageId]: {
                cards: [...latest.cards, ...fresh.filter((lead) => !ids.has(lead.id))].sort(byNewest),
                total: pagination.total,
                offset: Math.max(latest.offset, offset),
              },
            };
          });
          if (fresh.length > 0 || page >= pagination.pages) break;
          page += 1;
        }
      } finally {
        setLoadingMore(undefined);
      }
    },
    [shownPipelineId],
  );

  // Kept current from the stream's events: a new lead is placed where the lead service places it (the
  // default pipeline's first stage), a move or a score is applied in place, a deleted or merged-away
  // lead leaves; only a merge's primary and a lead moved in from elsewhere are asked for. A `reset`
  // (events lost) reloads all.
  useStream((message) => {
    if (message.type === 'reset') return void columns.reload();
    if (message.type === 'lead.captured') {
      const card = cardFromCaptured(message, pipelines.data);
      const stageId = card?.stage?.id;
      if (card && stageId && card.pipeline?.id === shownPipelineId)
        setColumns((all) =>
          all?.[stageId] ? { ...all, [stageId]: withCard(all[stageId], card, true)! } : all,
        );
      return;
    }
    if (message.type === 'lead.deleted' || message.type === 'lead.merged') {
      const gone = String(message.type === 'lead.deleted' ? message.data.leadId : message.data.duplicateId);
      const from = columnOf(current.current, gone);
      if (from) setColumns((all) => (all ? { ...all, [from]: withoutCard(all[from], gone)! } : all));
      else refreshCounts();
      const primaryId = message.data.primaryId;
      const primaryColumn = typeof primaryId === 'string' ? columnOf(current.current, primaryId) : undefined;
      if (typeof primaryId === 'string' && primaryColumn) {
        void api.GET('/api/leads/{id}', inPath({ id: primaryId })).then((result) => {
          const fresh = result.data;
          if (fresh) setColumns((all) => replaceCard(all, fresh));
        });
      }
      return;
    }
    if (message.type === 'lead.scored' || message.type === 'lead.updated') {
      const id = String(message.data.leadId);
      const changes = (message.data.changes ?? {}) as Record<string, unknown>;
      const from = columnOf(current.current, id);
      if (!from) {
        if ('stageId' in changes || 'pipelineId' in changes) {
          refreshCounts();
          // Moved into this pipeline (from another, or from a column's unloaded part): its card.
          if (shownPipelineId && changes.pipelineId === shownPipelineId) {
            void api.GET('/api/leads/{id}', inPath({ id })).then((result) => {
              const fresh = result.data;
              const stageId = fresh?.stage?.id;
              if (fresh && stageId && fresh.pipeline?.id === shownPipelineId && !fresh.isDuplicate)
                setColumns((all) =>
                  all?.[stageId] && !columnOf(all, fresh.id)
                    ? { ...all, [stageId]: withCard(all[stageId], fresh, false)! }
                    : all,
                );
            });
          }
        }
        return;
      }
      setColumns((all) => {
        const card = all?.[from]?.cards.find((lead) => lead.id === id);
        if (!all || !card) return all;
        const updated = applyToCard(card, message, pipelines.data);
        const to = updated.pipeline?.id === shownPipelineId ? updated.stage?.id : undefined;
        if (to === from) return replaceCard(all, updated);
        const next = { ...all, [from]: withoutCard(all[from], id)! };
        if (to && next[to]) next[to] = withCard(next[to], updated, true)!;
        return next;
      });
    }
  });

  const move = useAction();
  const more = useAction();
  const [dragging, setDragging] = useState<string | undefined>(undefined);
  const [over, setOver] = useState<string | undefined>(undefined);
  const [announcement, setAnnouncement] = useState('');
  // A card moved with its menu lands in another column (a new element): its menu keeps the focus.
  const [movedByMenu, setMovedByMenu] = useState<string | undefined>(undefined);
  useEffect(() => setAnnouncement(''), [pipeline?.id]);

  function moveLead(leadId: string, stageId: string) {
    const from = columnOf(columns.data, leadId);
    const lead = from ? columns.data?.[from]?.cards.find((candidate) => candidate.id === leadId) : undefined;
    const stage = pipeline?.stages.find((candidate) => candidate.id === stageId);
    if (!from || !lead || !stage || from === stageId) return;
    const before = columns.data;
    const moved = { ...lead, stage: { id: stage.id, name: stage.name } };
    setColumns((all) =>
      all
        ? { ...all, [from]: withoutCard(all[from], leadId)!, [stageId]: withCard(all[stageId], moved, true)! }
        : all,
    );
    void move
      .run(async () => {
        const updated = unwrap(
          await api.PUT('/api/leads/{id}/stage', { params: { path: { id: leadId } }, body: { stageId } }),
        );
        setColumns((all) => replaceCard(all, updated));
        setAnnouncement(`${fullName(lead)} moved to ${stage.name}`);
      })
      .then((ok) => {
        if (!ok) setColumns(before);
      });
  }

  if (pipelines.error) return <ErrorMessage error={pipelines.error} />;
  if (!pipeline) return <Status>Loading the pipelines…</Status>;
  const stages = [...pipeline.stages].sort((a, b) => a.order - b.order);

  return (
    <TitledSection
      id="board-title"
      title="Board"
      actions={
        <label>
          Pipeline{' '}
          <select
            value={pipeline.id}
            onChange={(event) => updateQuery({ pipeline: event.currentTarget.value })}
          >
            {(pipelines.data ?? []).map((candidate) => (
              <option key={candidate.id} value={candidate.id}>
                {candidate.name}
                {candidate.isDefault ? ' (default)' : ''}
              </option>
            ))}
          </select>
        </label>
      }
    >
      <p class="muted">
        Every lead of this pipeline, duplicates aside, newest first in each stage. Drag a card, or use its
        “Move to” menu.
      </p>
      <ErrorMessage error={columns.error ?? move.error ?? more.error} />
      <p class="visually-hidden" aria-live="polite">
        {announcement}
      </p>
      {columns.loading && !columns.data && <Status>Loading the leads…</Status>}
      <div class="board" aria-busy={columns.loading || stages.some((stage) => !columns.data?.[stage.id])}>
        {stages.map((stage) => {
          const column = columns.data?.[stage.id];
          const cards = column?.cards ?? [];
          const remaining = column ? column.total - cards.length : 0;
          return (
            <section
              key={stage.id}
              class={`column${over === stage.id ? ' drop-target' : ''}`}
              aria-labelledby={`stage-${stage.id}`}
              data-stage-id={stage.id}
              onDragOver={(event) => {
                if (!dragging) return;
                event.preventDefault();
                if (event.dataTransfer) event.dataTransfer.dropEffect = 'move';
                setOver(stage.id);
              }}
              onDragLeave={() => setOver((current) => (current === stage.id ? undefined : current))}
              onDrop={(event) => {
                event.preventDefault();
                const leadId = dragging ?? event.dataTransfer?.getData('text/plain');
                setOver(undefined);
                setDragging(undefined);
                if (leadId) moveLead(leadId, stage.id);
              }}
            >
              <h2 id={`stage-${stage.id}`}>
                <span
                  class="swatch"
                  aria-hidden="true"
                  data-color={stage.color}
                  ref={(element) => element?.style.setProperty('background', stage.color)}
                />
                {stage.name}{' '}
                <span class="count" title={`${column?.total ?? 0} leads in ${stage.name}`}>
                  {column?.total ?? '…'}
                </span>
              </h2>
              <ul class="column-cards">
                {cards.map((lead) => (
                  <BoardCard
                    key={lead.id}
                    lead={lead}
                    stages={stages}
                    focusMenu={movedByMenu === lead.id}
                    onDragStart={() => {
                      setMovedByMenu(undefined);
                      setDragging(lead.id);
                    }}
                    onDragEnd={() => {
                      setDragging(undefined);
                      setOver(undefined);
                    }}
                    onMove={(stageId) => {
                      setMovedByMenu(lead.id);
                      moveLead(lead.id, stageId);
                    }}
                  />
                ))}
              </ul>
              {remaining > 0 && (
                <button
                  type="button"
                  class="load-more"
                  disabled={loadingMore === stage.id}
                  aria-label={`Load more leads in ${stage.name} (${remaining} not shown)`}
                  onClick={() => void more.run(() => loadMore(stage.id))}
                >
                  {loadingMore === stage.id ? 'Loading…' : `Load more (${remaining} not shown)`}
                </button>
              )}
            </section>
          );
        })}
      </div>
    </TitledSection>
  );
}

/** The columns with a lead's card replaced (where it is loaded). */
function replaceCard(columns: Columns | undefined, card: BoardLead): Columns | undefined {
  const at = columnOf(columns, card.id);
  if (!columns || !at) return columns;
  const column = columns[at]!;
  return {
    ...columns,
    [at]: { ...column, cards: column.cards.map((lead) => (lead.id === card.id ? card : lead)) },
  };
}

/** What a card shows: a list item, or as much of it as the stream's events tell. */
type BoardLead = Pick<
  LeadListItem,
  | 'id'
  | 'firstName'
  | 'lastName'
  | 'email'
  | 'company'
  | 'score'
  | 'qualification'
  | 'pipeline'
  | 'stage'
  | 'createdAt'
>;

function defaultPlacement(pipelines: Pipeline[] | undefined) {
  const pipeline = pipelines?.find((candidate) => candidate.isDefault);
  const stage = pipeline && [...pipeline.stages].sort((a, b) => a.order - b.order)[0];
  return pipeline && stage
    ? { pipeline: { id: pipeline.id, name: pipeline.name }, stage: { id: stage.id, name: stage.name } }
    : undefined;
}

/** The card of a new lead (none for a duplicate: the board leaves them aside). */
function cardFromCaptured(event: StreamEvent, pipelines: Pipeline[] | undefined): BoardLead | undefined {
  const placement = defaultPlacement(pipelines);
  const row = placement && rowFromCaptured(event, placement);
  if (!row || row.isDuplicate) return undefined;
  const { id, firstName, lastName, email, company, score, qualification, pipeline, stage, createdAt } = row;
  return { id, firstName, lastName, email, company, score, qualification, pipeline, stage, createdAt };
}

function applyToCard(lead: BoardLead, event: StreamEvent, pipelines: Pipeline[] | undefined): BoardLead {
  const { data } = event;
  if (event.type === 'lead.scored') {
    return {
      ...lead,
      score: typeof data.score === 'number' ? data.score : lead.score,
      qualification: (typeof data.qualification === 'string'
        ? data.qualification
        : lead.qualification) as BoardLead['qualification'],
    };
  }
  const changes = (data.changes ?? {}) as Record<string, unknown>;
  const pipeline = pipelines?.find((candidate) => candidate.id === changes.pipelineId);
  const stage = pipeline?.stages.find((candidate) => candidate.id === changes.stageId);
  if (!pipeline || !stage) return lead;
  return {
    ...lead,
    pipeline: { id: pipeline.id, name: pipeline.name },
    stage: { id: stage.id, name: stage.name },
  };
}

function BoardCard(props: {
  lead: BoardLead;
  stages: Pipeline['stages'];
  focusMenu: boolean;
  onDragStart: () => void;
  onDragEnd: () => void;
  onMove: (stageId: string) => void;
}) {
  const { lead, stages, focusMenu } = props;
  const menu = useRef<HTMLSelectElement>(null);
  useEffect(() => {
    if (focusMenu) menu.current?.focus();
  }, [focusMenu]);
  return (
    <li
      class="card"
      draggable
      data-lead-id={lead.id}
      onDragStart={(event) => {
        event.dataTransfer?.setData('text/plain', lead.id);
        if (event.dataTransfer) event.dataTransfer.effectAllowed = 'move';
        props.onDragStart();
      }}
      onDragEnd={props.onDragEnd}
    >
      <strong>{fullName(lead)}</strong>
      <span class="muted">{lead.company ?? lead.email ?? ''}</span>
      <span>
        {lead.score}{' '}
        {lead.qualification && <span class={`q q-${lead.qualification}`}>{lead.qualification}</span>}
      </span>
      <label>
        <span class="visually-hidden">Move {fullName(lead)} to</span>
        <select
          ref={menu}
          value={lead.stage?.id ?? ''}
          onChange={(event) => props.onMove(event.currentTarget.value)}
          aria-label={`Move ${fullName(lead)} to stage`}
        >
          {!lead.stage && <option value="">—</option>}
          <Options choices={stages} />
        </select>
      </label>
    </li>
  );
}
