import { useState } from 'preact/hooks';
import {
  api,
  type LeadDetail,
  STATUSES,
  type Status,
  type TimelineEvent,
  type User,
  unwrap,
} from '../api/client.js';
import { session } from '../api/session.js';
import { useStream } from '../api/stream.js';
import {
  ConfirmButton,
  Drawer,
  ErrorMessage,
  formatDate,
  fullName,
  Status as Loading,
  useAction,
  useLoad,
} from '../components/ui.js';
import {
  describeActor,
  describeEnrollment,
  describeEvent,
  describeNotification,
  enrichmentSections,
  type NameBook,
} from './lead-history.js';
import { MergeToggle, matchReason, useMergePreview } from './MergeReview.js';
import { NotesSection } from './NotesSection.js';

interface LeadDrawerProps {
  leadId: string;
  users: User[];
  onClose: () => void;
  /** Something the list shows changed (status, assignee, a merge, a deletion). */
  onChanged: () => void;
  onOpenLead: (id: string) => void;
}

export function LeadDrawer(props: LeadDrawerProps) {
  const { leadId, onClose, onChanged } = props;
  const lead = useLoad(
    async () => unwrap(await api.GET('/api/leads/{id}', { params: { path: { id: leadId } } })),
    [leadId],
  );
  const events = useLoad(
    async () => unwrap(await api.GET('/api/leads/{id}/events', { params: { path: { id: leadId } } })).data,
    [leadId],
  );

  useStream((message) => {
    if (message.type === 'reset') {
      void lead.reload();
      void events.reload();
      return;
    }
    const { data } = message;
    if (data.leadId === leadId || data.primaryId === leadId || data.duplicateId === leadId) {
      void lead.reload();
      void events.reload();
    }
  });

  const changed = (next: LeadDetail) => {
    lead.setData(next);
    void events.reload();
    onChanged();
  };

  const title = lead.data ? fullName(lead.data) : 'Lead';
  return (
    <Drawer title={title} onClose={onClose}>
      <ErrorMessage error={lead.error} />
      {!lead.data && !lead.error && <Loading>Loading the lead…</Loading>}
      {lead.data && (
        <>
          <LeadFields lead={lead.data} />
          <WorkflowControls lead={lead.data} users={props.users} onChanged={changed} />
          <Score lead={lead.data} />
          <NotesSection lead={lead.data} onChanged={changed} />
          <Tags lead={lead.data} onChanged={() => void lead.reload().then(() => events.reload())} />
          <Duplicates
            lead={lead.data}
            users={props.users}
            onMerged={() => void lead.reload().then(onChanged)}
            onMergedAway={onChanged}
            onOpenLead={props.onOpenLead}
          />
          <Timeline events={events.data} error={events.error} users={props.users} />
          <Deliveries lead={lead.data} />
          <Enrichment lead={lead.data} />
          <DeleteLead
            lead={lead.data}
            onDeleted={() => {
              onChanged();
              onClose();
            }}
          />
        </>
      )}
    </Drawer>
  );
}

function LeadFields({ lead }: { lead: LeadDetail }) {
  const rows: Array<[string, string]> = [
    ['E-mail', lead.email ?? '—'],
    ['Phone', lead.phone ?? '—'],
    ['Company', lead.company ?? '—'],
    ['Source', `${lead.source.name}${lead.source.deleted ? ' (deleted)' : ''}`],
    ['Created', formatDate(lead.createdAt)],
  ];
  if (lead.attribution.referrer) rows.push(['Referrer', lead.attribution.referrer]);
  for (const [key, value] of Object.entries(lead.attribution.utm)) rows.push([key, String(value)]);
  for (const [key, value] of Object.entries(lead.customFields ?? {}))
    rows.push([key, typeof value === 'string' ? value : JSON.stringify(value)]);
  return (
    <section aria-labelledby="lead-fields">
      <h3 id="lead-fields">Details</h3>
      <dl class="fields">
        {rows.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function WorkflowControls(props: { lead: LeadDetail; users: User[]; onChanged: (lead: LeadDetail) => void }) {
  const { lead, users, onChanged } = props;
  const action = useAction();
  const id = lead.id;
  const pipelines = useLoad(async () => unwrap(await api.GET('/api/pipelines')), []);
  // The pipeline whose stages the Stage list offers: the lead's, until another one is picked.
  const [chosenPipelineId, setChosenPipelineId] = useState<string | undefined>(undefined);
  const shownPipelineId = chosenPipelineId ?? lead.pipeline?.id;
  const shownPipeline = pipelines.data?.find((candidate) => candidate.id === shownPipelineId);
  const moving = shownPipeline !== undefined && shownPipeline.id !== lead.pipeline?.id;
  const me = session.user;
  const assignees = users.length > 0 ? users : me ? [{ id: me.id, name: `${me.name} (me)` }] : [];
  const assigneeKnown = lead.assignedTo === null || assignees.some((user) => user.id === lead.assignedTo);

  return (
    <section aria-labelledby="lead-workflow" class="workflow">
      <h3 id="lead-workflow">Status and assignment</h3>
      <label>
        Status
        <select
          name="status"
          value={lead.status}
          disabled={action.pending}
          onChange={(event) => {
            const status = event.currentTarget.value as Status;
            void action.run(async () =>
              onChanged(
                unwrap(
                  await api.PUT('/api/leads/{id}/status', { params: { path: { id } }, body: { status } }),
                ),
              ),
            );
          }}
        >
          {STATUSES.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </label>
      {pipelines.data && pipelines.data.length > 0 && (
        <label>
          Pipeline
          <select
            name="pipeline"
            value={shownPipelineId ?? ''}
            disabled={action.pending}
            onChange={(event) => setChosenPipelineId(event.currentTarget.value)}
          >
            {!shownPipelineId && <option value="">—</option>}
            {pipelines.data.map((candidate) => (
              <option key={candidate.id} value={candidate.id}>
                {candidate.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {shownPipeline && (
        <label>
          {moving ? `Stage in ${shownPipeline.name}` : 'Stage'}
          <select
            name="stage"
            value={moving ? '' : (lead.stage?.id ?? '')}
            disabled={action.pending}
            onChange={(event) => {
              const stageId = event.currentTarget.value;
              if (!stageId) return;
              void action.run(async () => {
                onChanged(
                  unwrap(
                    await api.PUT('/api/leads/{id}/stage', { params: { path: { id } }, body: { stageId } }),
                  ),
                );
                setChosenPipelineId(undefined);
              });
            }}
          >
            {(moving || !lead.stage) && (
              <option value="">{moving ? 'Choose a stage to move the lead' : '—'}</option>
            )}
            {shownPipeline.stages.map((stage) => (
              <option key={stage.id} value={stage.id}>
                {stage.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {moving && (
        <p class="muted" role="status">
          The lead stays in {lead.pipeline?.name ?? 'no pipeline'} until a stage of {shownPipeline.name} is
          chosen.{' '}
          <button type="button" class="link" onClick={() => setChosenPipelineId(undefined)}>
            Keep it there
          </button>
        </p>
      )}
      <label>
        Assignee
        <select
          name="assignee"
          value={lead.assignedTo ?? ''}
          disabled={action.pending}
          onChange={(event) => {
            const userId = event.currentTarget.value || null;
            void action.run(async () =>
              onChanged(
                unwrap(
                  await api.PUT('/api/leads/{id}/assign', { params: { path: { id } }, body: { userId } }),
                ),
              ),
            );
          }}
        >
          <option value="">Unassigned</option>
          {assignees.map((user) => (
            <option key={user.id} value={user.id}>
              {user.name}
            </option>
          ))}
          {!assigneeKnown && <option value={lead.assignedTo ?? ''}>{lead.assignedTo}</option>}
        </select>
      </label>
      <ErrorMessage error={action.error} />
    </section>
  );
}

function Score({ lead }: { lead: LeadDetail }) {
  return (
    <section aria-labelledby="lead-score">
      <h3 id="lead-score">Score</h3>
      <p>
        <strong class="score">{lead.score}</strong> / 100{' '}
        {lead.qualification ? (
          <span class={`q q-${lead.qualification}`}>{lead.qualification}</span>
        ) : (
          '(not scored yet)'
        )}
      </p>
      {lead.scoreReasons.length > 0 && (
        <ul class="reasons">
          {lead.scoreReasons.map((reason) => (
            <li key={reason.label}>
              <span class="number">{reason.points > 0 ? `+${reason.points}` : reason.points}</span>{' '}
              {reason.label}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Tags({ lead, onChanged }: { lead: LeadDetail; onChanged: () => void }) {
  const [name, setName] = useState('');
  const action = useAction();
  return (
    <section aria-labelledby="lead-tags">
      <h3 id="lead-tags">Tags</h3>
      <ul class="tags">
        {lead.tags.map((tag) => (
          <li key={tag.id}>
            {tag.name}
            <button
              type="button"
              class="ghost"
              aria-label={`Remove tag ${tag.name}`}
              onClick={() =>
                void action.run(async () => {
                  unwrap(
                    await api.DELETE('/api/leads/{id}/tags/{tagId}', {
                      params: { path: { id: lead.id, tagId: tag.id } },
                    }),
                  );
                  onChanged();
                })
              }
            >
              ✕
            </button>
          </li>
        ))}
      </ul>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          if (!name.trim()) return;
          void action.run(async () => {
            unwrap(
              await api.POST('/api/leads/{id}/tags', {
                params: { path: { id: lead.id } },
                body: { name: name.trim() },
              }),
            );
            setName('');
            onChanged();
          });
        }}
      >
        <label>
          New tag
          <input
            type="text"
            value={name}
            maxLength={100}
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={action.pending}>
          Add tag
        </button>
      </form>
      <ErrorMessage error={action.error} />
    </section>
  );
}

function Duplicates(props: {
  lead: LeadDetail;
  users: User[];
  onMerged: () => void;
  /** This lead (a duplicate) was merged into its original: it is gone. */
  onMergedAway: () => void;
  onOpenLead: (id: string) => void;
}) {
  const { lead, users, onMerged, onOpenLead } = props;
  const duplicates = useLoad(
    async () =>
      unwrap(await api.GET('/api/leads/{id}/duplicates', { params: { path: { id: lead.id } } })).data,
    [lead.id, lead.updatedAt],
  );
  if (lead.isDuplicate && lead.duplicateOf) {
    return (
      <DuplicateOf
        lead={lead}
        primaryId={lead.duplicateOf}
        users={users}
        onMerged={props.onMergedAway}
        onOpenLead={onOpenLead}
      />
    );
  }
  if (!duplicates.data || duplicates.data.length === 0) return null;
  return (
    <section aria-labelledby="lead-duplicates">
      <h3 id="lead-duplicates">Duplicates</h3>
      <ul class="duplicates">
        {duplicates.data.map((duplicate) => (
          <li key={duplicate.id}>
            <span>
              {fullName(duplicate)} · {duplicate.email ?? '—'} · {formatDate(duplicate.createdAt)}
            </span>
            <MergeToggle
              label="Merge into this lead"
              primaryId={lead.id}
              duplicateId={duplicate.id}
              primaryLabel={fullName(lead)}
              duplicateLabel={fullName(duplicate)}
              users={users}
              onMerged={() => {
                void duplicates.reload();
                onMerged();
              }}
            />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A duplicate's drawer: which lead it duplicates and why, and the merge into that lead. */
function DuplicateOf(props: {
  lead: LeadDetail;
  primaryId: string;
  users: User[];
  onMerged: () => void;
  onOpenLead: (id: string) => void;
}) {
  const { lead, primaryId, onOpenLead } = props;
  const primary = useLoad(
    async () => unwrap(await api.GET('/api/leads/{id}', { params: { path: { id: primaryId } } })),
    [primaryId],
  );
  const preview = useMergePreview(primaryId, lead.id, lead.updatedAt);
  const primaryName = primary.data ? fullName(primary.data) : 'an earlier lead';
  return (
    <section aria-labelledby="lead-duplicates">
      <h3 id="lead-duplicates">Duplicate</h3>
      <p class="flagged">
        Flagged as a duplicate of{' '}
        <button type="button" class="link" onClick={() => onOpenLead(primaryId)}>
          {primaryName}
        </button>
        {preview.data ? ` because ${matchReason(preview.data.matchedOn)}.` : '.'}
      </p>
      <ErrorMessage error={primary.error ?? preview.error} />
      {primary.data && (
        <MergeToggle
          label={`Merge into ${primaryName}`}
          primaryId={primaryId}
          duplicateId={lead.id}
          primaryLabel={primaryName}
          duplicateLabel={fullName(lead)}
          users={props.users}
          onMerged={() => {
            props.onMerged();
            onOpenLead(primaryId);
          }}
        />
      )}
    </section>
  );
}

function Timeline({
  events,
  error,
  users,
}: {
  events: TimelineEvent[] | undefined;
  error?: string;
  users: User[];
}) {
  // Stage names for stage changes; users come from the list the leads screen loaded.
  const pipelines = useLoad(async () => unwrap(await api.GET('/api/pipelines')), []);
  const me = session.user;
  const book: NameBook = {
    users: me && !users.some((user) => user.id === me.id) ? [...users, me] : users,
    pipelines: pipelines.data ?? [],
  };
  return (
    <section aria-labelledby="lead-timeline">
      <h3 id="lead-timeline">Timeline</h3>
      <ErrorMessage error={error} />
      <ol class="timeline">
        {(events ?? []).map((event) => {
          const actor = describeActor(book, event.actor);
          return (
            <li key={event.id} data-type={event.type}>
              <time dateTime={event.occurredAt}>{formatDate(event.occurredAt)}</time>
              <span>
                {describeEvent(book, event.type, event.data)}
                {actor && <span class="muted"> {actor}</span>}
              </span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}

function Deliveries({ lead }: { lead: LeadDetail }) {
  return (
    <section aria-labelledby="lead-deliveries">
      <h3 id="lead-deliveries">Notifications and sequences</h3>
      <h4>Team notifications</h4>
      {lead.notifications.length === 0 ? (
        <p class="muted">None sent.</p>
      ) : (
        <ul>
          {lead.notifications.map((entry, index) => (
            <li key={String(entry.id ?? index)}>{describeNotification(entry)}</li>
          ))}
        </ul>
      )}
      <h4>Sequences</h4>
      {lead.enrollments.length === 0 ? (
        <p class="muted">Not enrolled in a sequence.</p>
      ) : (
        <ul>
          {lead.enrollments.map((entry, index) => (
            <li key={String(entry.enrollmentId ?? index)}>{describeEnrollment(entry)}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Enrichment({ lead }: { lead: LeadDetail }) {
  if (!lead.enrichment) return null;
  const sections = enrichmentSections(lead.enrichment as Record<string, unknown>);
  if (sections.length === 0) return null;
  return (
    <section aria-labelledby="lead-enrichment">
      <h3 id="lead-enrichment">Enrichment</h3>
      {sections.map((section) => (
        <div key={section.title} class="enrichment-group">
          <h4>{section.title}</h4>
          <dl class="fields">
            {section.rows.map(([label, value]) => (
              <div key={label}>
                <dt>{label}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        </div>
      ))}
    </section>
  );
}

function DeleteLead({ lead, onDeleted }: { lead: LeadDetail; onDeleted: () => void }) {
  const action = useAction();
  return (
    <section class="danger-zone" aria-label="Delete">
      <ConfirmButton
        danger
        question={`Delete ${fullName(lead)} and everything about this lead, permanently?`}
        action={action}
        onConfirm={async () => {
          unwrap(await api.DELETE('/api/leads/{id}', { params: { path: { id: lead.id } } }));
          onDeleted();
        }}
      >
        Delete lead
      </ConfirmButton>
      <ErrorMessage error={action.error} />
    </section>
  );
}
