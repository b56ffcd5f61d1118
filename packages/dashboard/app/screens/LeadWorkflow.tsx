import { useState } from 'preact/hooks';
import { api, type LeadDetail, STATUSES, type Status, type User, unwrap } from '../api/client.js';
import { session } from '../api/session.js';
import { Options } from '../components/fields.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, useAction, useLoad } from '../components/ui.js';

/** A lead's status, pipeline and stage, and assignee, each changed as soon as it is chosen. */
export function WorkflowControls(props: {
  lead: LeadDetail;
  users: User[];
  onChanged: (lead: LeadDetail) => void;
}) {
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
    <TitledSection id="lead-workflow" level={3} class="workflow" title="Status and assignment">
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
          <Options choices={STATUSES} />
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
            <Options choices={pipelines.data} />
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
            <Options choices={shownPipeline.stages} />
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
          <Options choices={assignees} />
          {!assigneeKnown && <option value={lead.assignedTo ?? ''}>{lead.assignedTo}</option>}
        </select>
      </label>
      <ErrorMessage error={action.error} />
    </TitledSection>
  );
}
