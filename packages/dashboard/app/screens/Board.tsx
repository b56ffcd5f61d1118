import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type LeadListItem, type Pipeline, unwrap } from '../api/client.js';
import { rowFromCaptured } from '../api/live-leads.js';
import { type StreamEvent, useStream } from '../api/stream.js';
import { ErrorMessage, fullName, Status, useAction, useLoad, useThrottled } from '../components/ui.js';

/** The newest leads of the pipeline the board shows: one list page (the API's largest). */
const BOARD_SIZE = 100;

/**
 * The pipeline board: a column per stage of the chosen pipeline with its newest leads (duplicates
 * aside) placed in them. Loaded with one list call (`pipelineId` filter; list items carry their
 * pipeline and stage), then kept current from the stream. Dragging a card to another column, or
 * choosing a stage in its "Move to" menu (keyboard and touch), moves the lead with
 * PUT /api/leads/<id>/stage.
 */
export function Board() {
  const pipelines = useLoad(async () => unwrap(await api.GET('/api/pipelines')), []);
  const [pipelineId, setPipelineId] = useState<string | undefined>(undefined);
  const pipeline: Pipeline | undefined =
    pipelines.data?.find((candidate) => candidate.id === pipelineId) ??
    pipelines.data?.find((candidate) => candidate.isDefault) ??
    pipelines.data?.[0];
  const shownPipelineId = pipeline?.id;

  const leads = useLoad<BoardLead[]>(async () => {
    if (!shownPipelineId) return [];
    const query = { pipelineId: shownPipelineId, duplicates: 'exclude', limit: BOARD_SIZE } as const;
    return unwrap(await api.GET('/api/leads', { params: { query } })).data;
  }, [shownPipelineId]);
  // A lead moved into this pipeline from elsewhere is not on the board yet: ask for the page again.
  const reloadSoon = useThrottled(() => void leads.reload(), 1000);

  // Kept current from the stream's events: a new lead is placed where the lead service places it (the
  // default pipeline's first stage), a move or a score is applied in place, a deleted or merged-away
  // lead leaves; only a merge's primary is asked for again. A `reset` (events lost) reloads all.
  useStream((message) => {
    if (message.type === 'reset') return void leads.reload();
    if (message.type === 'lead.captured') {
      const card = cardFromCaptured(message, pipelines.data);
      if (card && card.pipeline?.id === shownPipelineId)
        leads.setData((current) =>
          current && !current.some((lead) => lead.id === card.id)
            ? [card, ...current].slice(0, BOARD_SIZE)
            : current,
        );
      return;
    }
    if (message.type === 'lead.deleted' || message.type === 'lead.merged') {
      const gone = message.type === 'lead.deleted' ? message.data.leadId : message.data.duplicateId;
      leads.setData((current) => current?.filter((lead) => lead.id !== gone));
      const primaryId = message.data.primaryId;
      if (typeof primaryId === 'string' && leads.data?.some((lead) => lead.id === primaryId)) {
        void api.GET('/api/leads/{id}', { params: { path: { id: primaryId } } }).then((result) => {
          const fresh = result.data;
          if (fresh)
            leads.setData((current) => current?.map((lead) => (lead.id === primaryId ? fresh : lead)));
        });
      }
      return;
    }
    if (message.type === 'lead.scored' || message.type === 'lead.updated') {
      const id = message.data.leadId;
      const changes = (message.data.changes ?? {}) as Record<string, unknown>;
      if (
        shownPipelineId &&
        changes.pipelineId === shownPipelineId &&
        !leads.data?.some((lead) => lead.id === id)
      ) {
        return reloadSoon();
      }
      leads.setData((current) =>
        current?.map((lead) => (lead.id === id ? applyToCard(lead, message, pipelines.data) : lead)),
      );
    }
  });

  const move = useAction();
  const [dragging, setDragging] = useState<string | undefined>(undefined);
  const [over, setOver] = useState<string | undefined>(undefined);
  const [announcement, setAnnouncement] = useState('');
  // A card moved with its menu lands in another column (a new element): its menu keeps the focus.
  const [movedByMenu, setMovedByMenu] = useState<string | undefined>(undefined);
  useEffect(() => setAnnouncement(''), [pipeline?.id]);

  function moveLead(leadId: string, stageId: string) {
    const lead = leads.data?.find((candidate) => candidate.id === leadId);
    const stage = pipeline?.stages.find((candidate) => candidate.id === stageId);
    if (!lead || !stage || lead.stage?.id === stageId) return;
    const before = leads.data;
    leads.setData((current) =>
      current?.map((candidate) =>
        candidate.id === leadId ? { ...candidate, stage: { id: stage.id, name: stage.name } } : candidate,
      ),
    );
    void move
      .run(async () => {
        const updated = unwrap(
          await api.PUT('/api/leads/{id}/stage', { params: { path: { id: leadId } }, body: { stageId } }),
        );
        leads.setData((current) =>
          current?.map((candidate) => (candidate.id === leadId ? updated : candidate)),
        );
        setAnnouncement(`${fullName(lead)} moved to ${stage.name}`);
      })
      .then((ok) => {
        if (!ok) leads.setData(before);
      });
  }

  if (pipelines.error) return <ErrorMessage error={pipelines.error} />;
  if (!pipeline) return <Status>Loading the pipelines…</Status>;
  const stages = [...pipeline.stages].sort((a, b) => a.order - b.order);
  // Cards that left this pipeline (a move seen on the stream) leave the board.
  const onBoard = (leads.data ?? []).filter((lead) => lead.pipeline?.id === pipeline.id);

  return (
    <section aria-labelledby="board-title">
      <div class="toolbar">
        <h1 id="board-title">Board</h1>
        <label>
          Pipeline{' '}
          <select value={pipeline.id} onChange={(event) => setPipelineId(event.currentTarget.value)}>
            {(pipelines.data ?? []).map((candidate) => (
              <option key={candidate.id} value={candidate.id}>
                {candidate.name}
                {candidate.isDefault ? ' (default)' : ''}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p class="muted">
        The {BOARD_SIZE} newest leads of this pipeline, duplicates aside. Drag a card, or use its “Move to”
        menu.
      </p>
      <ErrorMessage error={leads.error ?? move.error} />
      <p class="visually-hidden" aria-live="polite">
        {announcement}
      </p>
      {leads.loading && !leads.data && <Status>Loading the leads…</Status>}
      <div class="board" aria-busy={leads.loading}>
        {stages.map((stage) => {
          const cards = onBoard.filter((lead) => (lead.stage?.id ?? stages[0]?.id) === stage.id);
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
                {stage.name} <span class="count">{cards.length}</span>
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
            </section>
          );
        })}
      </div>
    </section>
  );
}

/** What a card shows: a list item, or as much of it as the stream's events tell. */
type BoardLead = Pick<
  LeadListItem,
  'id' | 'firstName' | 'lastName' | 'email' | 'company' | 'score' | 'qualification' | 'pipeline' | 'stage'
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
  const { id, firstName, lastName, email, company, score, qualification, pipeline, stage } = row;
  return { id, firstName, lastName, email, company, score, qualification, pipeline, stage };
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
          {stages.map((stage) => (
            <option key={stage.id} value={stage.id}>
              {stage.name}
            </option>
          ))}
        </select>
      </label>
    </li>
  );
}
