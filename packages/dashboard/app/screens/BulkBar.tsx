import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, type LeadListItem, type Pipeline, STATUSES, type User, unwrap } from '../api/client.js';
import { Options } from '../components/fields.js';
import { Form } from '../components/forms.js';
import { ErrorMessage, fullName, useAction, useLoad } from '../components/ui.js';

export type BulkActionType = 'assign' | 'status' | 'stage' | 'addTags' | 'removeTags' | 'delete';
type BulkAnswer = {
  succeeded: number;
  failed: number;
  results: { id: string; ok: boolean; error?: string }[];
};

const ACTION_LABELS: Record<BulkActionType, string> = {
  assign: 'Assign to',
  status: 'Set status',
  stage: 'Move to stage',
  addTags: 'Add tag',
  removeTags: 'Remove tag',
  delete: 'Delete',
};

const PAST: Record<BulkActionType, string> = {
  assign: 'assigned',
  status: 'updated',
  stage: 'moved',
  addTags: 'tagged',
  removeTags: 'untagged',
  delete: 'deleted',
};

export const BULK_VALUE_ID = 'bulk-value';

/** What the last bulk action did, shown under the bar (and announced) after the selection changes. */
export interface BulkReport {
  text: string;
  failures: string[];
}

/** The outcome of the last bulk action; a live region, so screen readers hear it. */
export function BulkReportView({ report }: { report: BulkReport | undefined }) {
  return (
    <div role="status" class="bulk-report">
      {report && <p>{report.text}</p>}
      {report && report.failures.length > 0 && (
        <ul>
          {report.failures.map((failure) => (
            <li key={failure}>{failure}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * What to do to the selected leads: one POST /api/leads/bulk, each lead through the same change as
 * its drawer's (timeline, live updates, outbound webhooks). A delete asks first. The selection stays
 * (but for deleted leads), so one set of leads can be assigned, then tagged.
 */
export function BulkBar(props: {
  selected: LeadListItem[];
  users: User[];
  action: BulkActionType;
  onActionChange: (action: BulkActionType) => void;
  /** After an answer: what to tell the user, and the leads that are gone (deleted). */
  onDone: (report: BulkReport, deletedIds: string[]) => void;
  onClear: () => void;
}) {
  const { selected, users, action } = props;
  // Asked once, when the first lead is selected: opening the list costs no extra request.
  const pipelines = useLoad(async () => unwrap(await api.GET('/api/pipelines')), []);
  const [value, setValue] = useState('');
  const run = useAction();

  function actionBody(): Record<string, unknown> | undefined {
    switch (action) {
      case 'assign':
        return value === '' ? undefined : { type: action, userId: value === 'unassigned' ? null : value };
      case 'status':
      case 'stage':
        if (value === '') return undefined;
        return action === 'status' ? { type: action, status: value } : { type: action, stageId: value };
      case 'addTags':
      case 'removeTags': {
        const tags = [
          ...new Set(
            value
              .split(',')
              .map((tag) => tag.trim())
              .filter(Boolean),
          ),
        ];
        return tags.length === 0 ? undefined : { type: action, tags };
      }
      case 'delete':
        return { type: action };
    }
  }

  async function apply() {
    const body = actionBody();
    if (!body) return;
    const count = selected.length;
    if (
      action === 'delete' &&
      !confirm(`Delete ${count === 1 ? 'this lead' : `these ${count} leads`}? This cannot be undone.`)
    )
      return;
    const names = new Map(selected.map((lead) => [lead.id, fullName(lead)]));
    await run.run(async () => {
      const answer: BulkAnswer = unwrap(
        await api.POST('/api/leads/bulk', {
          body: { ids: selected.map((lead) => lead.id), action: body as never },
        }),
      );
      const failed = answer.results.filter((result) => !result.ok);
      const report = {
        text: `${answer.succeeded} ${answer.succeeded === 1 ? 'lead' : 'leads'} ${PAST[action]}${failed.length ? `, ${failed.length} failed` : ''}.`,
        failures: failed.map((result) => `${names.get(result.id) ?? result.id}: ${result.error ?? 'failed'}`),
      };
      if (action !== 'delete') setValue('');
      const deleted =
        action === 'delete' ? answer.results.filter((result) => result.ok).map((result) => result.id) : [];
      props.onDone(report, deleted);
    });
  }

  return (
    <section class="bulk-bar" aria-label="Bulk actions">
      <Form class="bulk-form" onSubmit={() => void apply()}>
        <strong aria-live="polite">{selected.length} selected</strong>
        <label>
          Action{' '}
          <select
            name="bulk-action"
            value={action}
            onChange={(event) => {
              props.onActionChange(event.currentTarget.value as BulkActionType);
              setValue('');
            }}
          >
            {(Object.keys(ACTION_LABELS) as BulkActionType[]).map((type) => (
              <option key={type} value={type}>
                {ACTION_LABELS[type]}
              </option>
            ))}
          </select>
        </label>
        <BulkValue
          action={action}
          value={value}
          onValue={setValue}
          users={users}
          pipelines={pipelines.data ?? []}
        />
        <button
          type="submit"
          class={action === 'delete' ? 'danger' : 'primary'}
          disabled={run.pending || actionBody() === undefined}
        >
          {run.pending ? 'Applying…' : action === 'delete' ? `Delete ${selected.length}` : 'Apply'}
        </button>
        <button type="button" class="ghost" onClick={props.onClear}>
          Clear selection
        </button>
      </Form>
      <ErrorMessage error={run.error ?? pipelines.error} />
    </section>
  );
}

function BulkValue(props: {
  action: BulkActionType;
  value: string;
  onValue: (value: string) => void;
  users: User[];
  pipelines: Pipeline[];
}) {
  const { action, value, onValue } = props;
  const onChange = (event: { currentTarget: HTMLSelectElement | HTMLInputElement }) =>
    onValue(event.currentTarget.value);
  // The value of an action that picks one of a list: its options after "Choose…" (no value yet).
  const choose = (label: string, options: ComponentChildren) => (
    <label>
      <span class="visually-hidden">{label}</span>
      <select id={BULK_VALUE_ID} value={value} onChange={onChange}>
        <option value="">Choose…</option>
        {options}
      </select>
    </label>
  );
  switch (action) {
    case 'assign':
      return choose(
        'Assignee',
        <Options
          choices={[
            { id: 'unassigned', name: 'Nobody (unassign)' },
            ...props.users.filter((user) => user.active),
          ]}
        />,
      );
    case 'status':
      return choose('Status', <Options choices={STATUSES} />);
    case 'stage':
      return choose(
        'Stage',
        props.pipelines.map((pipeline) => (
          <optgroup key={pipeline.id} label={pipeline.name}>
            <Options choices={pipeline.stages} />
          </optgroup>
        )),
      );
    case 'addTags':
    case 'removeTags':
      return (
        <label>
          <span class="visually-hidden">Tags, separated by commas</span>
          <input
            id={BULK_VALUE_ID}
            type="text"
            value={value}
            maxLength={500}
            placeholder="Tags, comma-separated"
            onInput={onChange}
          />
        </label>
      );
    case 'delete':
      return null;
  }
}
