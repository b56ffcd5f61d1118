import { useState } from 'preact/hooks';
import { api, inPath, type LeadDetail, type User, unwrap } from '../api/client.js';
import { useStream } from '../api/stream.js';
import { TextField } from '../components/fields.js';
import { InlineForm } from '../components/forms.js';
import { TitledSection } from '../components/sections.js';
import {
  ActionButton,
  Drawer,
  ErrorMessage,
  FieldList,
  formatDate,
  fullName,
  Status as Loading,
  RemoveButton,
  useAction,
  useLoad,
} from '../components/ui.js';
import { Deliveries, Enrichment, Timeline } from './LeadActivity.js';
import { Duplicates } from './LeadDuplicates.js';
import { WorkflowControls } from './LeadWorkflow.js';
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
    async () => unwrap(await api.GET('/api/leads/{id}', inPath({ id: leadId }))),
    [leadId],
  );
  const events = useLoad(
    async () => unwrap(await api.GET('/api/leads/{id}/events', inPath({ id: leadId }))).data,
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
  const { attribution } = lead;
  if (attribution.referrer) rows.push(['Referrer', attribution.referrer]);
  if (attribution.landingPage) rows.push(['Landing page', attribution.landingPage]);
  for (const [key, value] of Object.entries(attribution.utm)) rows.push([key, String(value)]);
  // Ad click ids (gclid, fbclid, …) under the names the ad platforms give them.
  for (const [key, value] of Object.entries(attribution.clickIds)) rows.push([key, value]);
  for (const [key, value] of Object.entries(lead.customFields ?? {}))
    rows.push([key, typeof value === 'string' ? value : JSON.stringify(value)]);
  return (
    <TitledSection id="lead-fields" level={3} title="Details">
      <FieldList rows={rows} />
    </TitledSection>
  );
}

function Score({ lead }: { lead: LeadDetail }) {
  return (
    <TitledSection id="lead-score" level={3} title="Score">
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
    </TitledSection>
  );
}

function Tags({ lead, onChanged }: { lead: LeadDetail; onChanged: () => void }) {
  const [name, setName] = useState('');
  const action = useAction();
  return (
    <TitledSection id="lead-tags" level={3} title="Tags">
      <ul class="tags">
        {lead.tags.map((tag) => (
          <li key={tag.id}>
            {tag.name}
            <RemoveButton
              label={`Remove tag ${tag.name}`}
              onClick={() =>
                void action.run(async () => {
                  unwrap(
                    await api.DELETE('/api/leads/{id}/tags/{tagId}', inPath({ id: lead.id, tagId: tag.id })),
                  );
                  onChanged();
                })
              }
            />
          </li>
        ))}
      </ul>
      <InlineForm
        minor
        submitLabel="Add tag"
        action={action}
        onSubmit={async () => {
          if (!name.trim()) return;
          unwrap(
            await api.POST('/api/leads/{id}/tags', {
              params: { path: { id: lead.id } },
              body: { name: name.trim() },
            }),
          );
          setName('');
          onChanged();
        }}
      >
        <TextField label="New tag" value={name} maxLength={100} onValue={setName} />
      </InlineForm>
      <ErrorMessage error={action.error} />
    </TitledSection>
  );
}

function DeleteLead({ lead, onDeleted }: { lead: LeadDetail; onDeleted: () => void }) {
  const action = useAction();
  return (
    <section class="danger-zone" aria-label="Delete">
      <ActionButton
        class="danger"
        question={`Delete ${fullName(lead)} and everything about this lead, permanently?`}
        action={action}
        onRun={async () => unwrap(await api.DELETE('/api/leads/{id}', inPath({ id: lead.id })))}
        onDone={onDeleted}
      >
        Delete lead
      </ActionButton>
      <ErrorMessage error={action.error} />
    </section>
  );
}
