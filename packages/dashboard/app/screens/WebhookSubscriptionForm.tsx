import { WEBHOOK_EVENT_TYPES } from '@lead-capture/contracts/lead-events';
import { useState } from 'preact/hooks';
import { QUALIFICATIONS, type Source, type WebhookSubscription } from '../api/client.js';
import { fieldProblems } from '../api/problems.js';
import { CheckField, CheckList, TextField } from '../components/fields.js';
import { EditorForm } from '../components/forms.js';
import { useAction } from '../components/ui.js';

/** The event types a subscription may take (`*`: every one of them, also those added later). */
export const EVENT_TYPES = WEBHOOK_EVENT_TYPES;
export const ALL_EVENTS = '*';

type EventType = (typeof EVENT_TYPES)[number] | typeof ALL_EVENTS;
type Qualification = (typeof QUALIFICATIONS)[number];

export interface Draft {
  url: string;
  description: string;
  eventTypes: EventType[];
  sourceIds: string[];
  qualifications: Qualification[];
  alertEmails: string;
  active: boolean;
}

export const EMPTY_DRAFT: Draft = {
  url: '',
  description: '',
  eventTypes: ['lead.captured'],
  sourceIds: [],
  qualifications: [],
  alertEmails: '',
  active: true,
};

export function draftOf(subscription: WebhookSubscription): Draft {
  return {
    url: subscription.url,
    description: subscription.description ?? '',
    eventTypes: subscription.eventTypes as EventType[],
    sourceIds: subscription.filters.sourceIds ?? [],
    qualifications: subscription.filters.qualifications ?? [],
    alertEmails: subscription.alertEmails.join(', '),
    active: subscription.active,
  };
}

/** The create / update body of a draft (the API checks the URL, the e-mails and the rest). */
export function bodyOf(draft: Draft) {
  return {
    url: draft.url.trim(),
    description: draft.description.trim() || null,
    eventTypes: draft.eventTypes,
    filters: { sourceIds: draft.sourceIds, qualifications: draft.qualifications },
    alertEmails: draft.alertEmails
      .split(/[,\s]+/)
      .map((email) => email.trim())
      .filter(Boolean),
    active: draft.active,
  };
}

/** A subscription's create or edit form: its URL, the events it takes, its filters and alerts. */
export function SubscriptionForm(props: {
  title: string;
  initial: Draft;
  sources: Source[];
  submitLabel: string;
  onSubmit: (draft: Draft) => Promise<void>;
  onCancel?: () => void;
}) {
  const [draft, setDraft] = useState<Draft>(props.initial);
  const save = useAction();
  const set = (changes: Partial<Draft>) => setDraft((current) => ({ ...current, ...changes }));
  const all = draft.eventTypes.includes(ALL_EVENTS);
  const formId = props.title.toLowerCase().replace(/[^a-z]+/g, '-');
  // The API's refusal of the URL, the description or an alert e-mail is said under that field.
  const problems = fieldProblems(save.error, {
    url: 'The target URL',
    description: 'The description',
    alertEmails: (index) => {
      const email = index === undefined ? undefined : bodyOf(draft).alertEmails[index];
      return email === undefined ? 'The alert e-mails' : `The alert e-mail "${email}"`;
    },
  });
  const problem = (field: keyof typeof problems.byField) => ({
    problem: problems.byField[field],
    problemId: `${formId}-${field}-problem`,
  });

  return (
    <EditorForm
      title={props.title}
      titleId={`${formId}-title`}
      action={save}
      error={problems.rest}
      onSubmit={() => props.onSubmit(draft)}
      submitLabel={props.submitLabel}
      submitDisabled={draft.eventTypes.length === 0}
      onCancel={props.onCancel}
    >
      <TextField
        label="Target URL"
        type="url"
        required
        maxLength={2048}
        placeholder="https://hooks.example.com/lead-capture"
        value={draft.url}
        onValue={(url) => set({ url })}
        {...problem('url')}
      />
      <TextField
        label="Description (optional)"
        maxLength={500}
        value={draft.description}
        onValue={(description) => set({ description })}
        {...problem('description')}
      />
      <fieldset>
        <legend>Events</legend>
        <CheckField
          label="All events"
          checked={all}
          onChange={(checked) => set({ eventTypes: checked ? [ALL_EVENTS] : ['lead.captured'] })}
        />
        <CheckList
          choices={EVENT_TYPES}
          all={all}
          selected={draft.eventTypes}
          onChange={(eventTypes) => set({ eventTypes })}
        />
      </fieldset>
      <fieldset>
        <legend>Only leads of these sources (none checked: every source)</legend>
        <CheckList
          choices={props.sources}
          selected={draft.sourceIds}
          onChange={(sourceIds) => set({ sourceIds })}
        />
        {props.sources.length === 0 && <p class="muted">No source yet.</p>}
      </fieldset>
      <fieldset>
        <legend>Only leads qualified as (none checked: every lead, scored or not)</legend>
        <CheckList
          choices={QUALIFICATIONS}
          selected={draft.qualifications}
          onChange={(qualifications) => set({ qualifications })}
        />
      </fieldset>
      <TextField
        label="Alert e-mails when the subscription is disabled (comma-separated, optional)"
        value={draft.alertEmails}
        onValue={(alertEmails) => set({ alertEmails })}
        {...problem('alertEmails')}
      />
      <CheckField label="Active" checked={draft.active} onChange={(active) => set({ active })} />
    </EditorForm>
  );
}
