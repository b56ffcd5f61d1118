import { useState } from 'preact/hooks';
import {
  api,
  inPath,
  QUALIFICATIONS,
  type Sequence,
  type SequenceEnrollment,
  unwrap,
} from '../api/client.js';
import { CheckField, CheckList, listEdits, TextField } from '../components/fields.js';
import { CardTable } from '../components/lists.js';
import { type RecordCalls, RecordEditor, RecordList } from '../components/records.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, formatDate, useLoad } from '../components/ui.js';

type Qualification = (typeof QUALIFICATIONS)[number];
type SequenceBody = Pick<Sequence, 'name' | 'active' | 'match' | 'steps'>;

/**
 * The form's state: every field of a sequence the API has, so that saving a sequence nobody edited
 * sends exactly what was loaded. Lists keep the order they came in; tags keep their text until edited.
 */
interface SequenceDraft {
  name: string;
  active: boolean;
  /** None: leads of any qualification. */
  qualifications: Qualification[];
  /** None: leads from any source. */
  sourceIds: string[];
  minScore: string;
  tags: string[];
  tagsText: string;
  steps: Array<{ delayMinutes: number; subject: string; body: string }>;
}

function toDraft(sequence: Sequence | undefined): SequenceDraft {
  const match = sequence?.match ?? { qualifications: ['hot'] };
  return {
    name: sequence?.name ?? '',
    active: sequence?.active ?? true,
    qualifications: [...(match.qualifications ?? [])],
    sourceIds: [...(match.sourceIds ?? [])],
    minScore: match.minScore === undefined ? '' : String(match.minScore),
    tags: [...(match.tags ?? [])],
    tagsText: (match.tags ?? []).join(', '),
    steps: sequence?.steps.map(({ delayMinutes, subject, body }) => ({
      delayMinutes,
      subject,
      body,
    })) ?? [{ delayMinutes: 0, subject: '', body: '' }],
  };
}

/** The PUT/POST body: each condition the draft holds, none left to a default. */
function toBody(draft: SequenceDraft): SequenceBody {
  return {
    name: draft.name,
    active: draft.active,
    match: {
      ...(draft.qualifications.length ? { qualifications: draft.qualifications } : {}),
      ...(draft.sourceIds.length ? { sourceIds: draft.sourceIds } : {}),
      ...(draft.minScore !== '' ? { minScore: Number(draft.minScore) } : {}),
      ...(draft.tags.length ? { tags: draft.tags } : {}),
    },
    steps: draft.steps,
  };
}

const SEQUENCE_CALLS: RecordCalls<SequenceBody> = {
  create: async (body) => unwrap(await api.POST('/api/sequences', { body })),
  update: async (id, body) => unwrap(await api.PUT('/api/sequences/{id}', { ...inPath({ id }), body })),
  remove: async (id) => unwrap(await api.DELETE('/api/sequences/{id}', inPath({ id }))),
};

export function Sequences() {
  const sequences = useLoad(async () => unwrap(await api.GET('/api/sequences')), []);
  return (
    <RecordList
      titleId="sequences-title"
      title="Sequences"
      noun="sequence"
      records={sequences}
      empty={(startNew) => (
        <div class="empty-state">
          <p>
            <strong>No sequence yet.</strong> A sequence sends a series of e-mails to new leads that match it
            (for example hot leads from your website), spaced by the delays you choose, and stops when a lead
            is contacted or closed.
          </p>
          <button type="button" class="primary" onClick={startNew}>
            Create the first sequence
          </button>
        </div>
      )}
      detailOf={(sequence) => (
        <>
          {' '}
          {sequence.active ? '' : <span class="badge">paused</span>} · {sequence.steps.length}{' '}
          {sequence.steps.length === 1 ? 'step' : 'steps'} over{' '}
          {formatDelay(sequence.steps.reduce((total, step) => total + step.delayMinutes, 0))}
        </>
      )}
      editor={({ key, record, onDone }) => (
        <>
          <SequenceEditor key={key} sequence={record} onDone={onDone} />
          {record && <Enrollments sequenceId={record.id} />}
        </>
      )}
    />
  );
}

function SequenceEditor({ sequence, onDone }: { sequence: Sequence | undefined; onDone: () => void }) {
  const [draft, setDraft] = useState(() => toDraft(sequence));
  const sources = useLoad(async () => unwrap(await api.GET('/api/sources')), []);
  // A source the list no longer has (deleted) stays in the targeting until unticked.
  const sourceChoices = [
    ...(sources.data ?? []).map((source) => ({
      id: source.id,
      name: source.name,
    })),
    ...draft.sourceIds
      .filter((id) => !sources.data?.some((source) => source.id === id))
      .map((id) => ({
        id,
        name: sources.data ? `Deleted source ${id.slice(0, 8)}` : id,
      })),
  ];
  const steps = listEdits(draft.steps, (list) => setDraft({ ...draft, steps: list }));
  return (
    <RecordEditor
      noun="sequence"
      record={sequence}
      name={draft.name}
      onName={(name) => setDraft({ ...draft, name })}
      calls={SEQUENCE_CALLS}
      body={() => toBody(draft)}
      removeQuestion={(name) => `Delete the sequence ${name}?`}
      onDone={onDone}
    >
      <CheckField
        label="Active (enrols matching leads)"
        checked={draft.active}
        onChange={(checked) => setDraft({ ...draft, active: checked })}
      />
      <fieldset>
        <legend>Enrol leads that are (none ticked: any qualification)</legend>
        <CheckList
          choices={QUALIFICATIONS}
          selected={draft.qualifications}
          onChange={(qualifications) => setDraft({ ...draft, qualifications })}
        />
        <TextField
          label="Minimum score"
          type="number"
          min={0}
          max={100}
          value={draft.minScore}
          onValue={(value) => setDraft({ ...draft, minScore: value })}
        />
      </fieldset>
      <fieldset>
        <legend>From the sources (none ticked: any source)</legend>
        <ErrorMessage error={sources.error} />
        <CheckList
          choices={sourceChoices}
          selected={draft.sourceIds}
          onChange={(sourceIds) => setDraft({ ...draft, sourceIds })}
        />
      </fieldset>
      <label>
        With all of the tags (comma-separated; empty: any tags)
        <input
          value={draft.tagsText}
          onInput={(e) => {
            const tagsText = e.currentTarget.value;
            const tags = tagsText
              .split(',')
              .map((tag) => tag.trim())
              .filter(Boolean);
            setDraft({ ...draft, tagsText, tags });
          }}
        />
      </label>
      <fieldset>
        <legend>Steps</legend>
        <ol>
          {draft.steps.map((step, index) => (
            <li key={index} class="step">
              <DelayInput
                label={index === 0 ? 'Send after enrolment' : 'Send after the previous step'}
                minutes={step.delayMinutes}
                onChange={(delayMinutes) => steps.change(index, { delayMinutes })}
              />
              <TextField
                label="Subject"
                required
                value={step.subject}
                onValue={(value) => steps.change(index, { subject: value })}
              />
              <label>
                Body
                <textarea
                  rows={4}
                  required
                  value={step.body}
                  onInput={(e) => steps.change(index, { body: e.currentTarget.value })}
                />
              </label>
              <button
                type="button"
                class="ghost"
                disabled={draft.steps.length === 1}
                onClick={() => steps.remove(index)}
              >
                Remove step {index + 1}
              </button>
            </li>
          ))}
        </ol>
        <button type="button" onClick={() => steps.add({ delayMinutes: 1440, subject: '', body: '' })}>
          Add step
        </button>
      </fieldset>
    </RecordEditor>
  );
}

function Enrollments({ sequenceId }: { sequenceId: string }) {
  const enrollments = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/sequences/{id}/enrollments', {
          params: { path: { id: sequenceId }, query: { limit: 50 } },
        }),
      ),
    [sequenceId],
  );
  return (
    <TitledSection
      id="enrollments-title"
      level={2}
      title={<>Enrolments ({enrollments.data?.pagination.total ?? '…'})</>}
    >
      <ErrorMessage error={enrollments.error} />
      {enrollments.data?.data.length === 0 ? (
        <p class="empty-state">
          No lead is enrolled yet. New leads that match this sequence are enrolled when they arrive (after
          scoring and the team notification); leads captured before it was created are not.
        </p>
      ) : (
        <CardTable columns={['Lead', 'Status', 'Step', 'Next step', 'Enrolled']}>
          {(enrollments.data?.data ?? []).map((entry) => (
            <tr key={entry.id}>
              <td data-label="Lead">
                <a href={`/?lead=${entry.leadId}`}>{enrolledLeadName(entry.lead)}</a>
              </td>
              <td data-label="Status">
                {entry.status}
                {entry.stoppedReason ? ` (${entry.stoppedReason})` : ''}
              </td>
              <td data-label="Step" class="number">
                {entry.currentStep}
              </td>
              <td data-label="Next step">{formatDate(entry.nextStepAt)}</td>
              <td data-label="Enrolled">{formatDate(entry.enrolledAt)}</td>
            </tr>
          ))}
        </CardTable>
      )}
    </TitledSection>
  );
}

function enrolledLeadName(lead: SequenceEnrollment['lead']): string {
  if (!lead) return 'A lead';
  const name = [lead.firstName, lead.lastName].filter(Boolean).join(' ');
  if (name && lead.email) return `${name} (${lead.email})`;
  return name || lead.email || lead.company || 'A lead without name or e-mail';
}

const UNITS = [
  { unit: 'days', minutes: 1440 },
  { unit: 'hours', minutes: 60 },
  { unit: 'minutes', minutes: 1 },
] as const;
type Unit = (typeof UNITS)[number]['unit'];

/** The largest unit the delay is a whole number of: 2880 -> 2 days, 90 -> 90 minutes. */
function splitDelay(minutes: number): { amount: number; unit: Unit } {
  if (minutes === 0) return { amount: 0, unit: 'hours' };
  const fit = UNITS.find((entry) => minutes % entry.minutes === 0 && minutes >= entry.minutes) ?? UNITS[2];
  return { amount: minutes / fit.minutes, unit: fit.unit };
}

/** "2 days", "1 hour", "immediately". */
export function formatDelay(minutes: number): string {
  if (minutes === 0) return 'no delay';
  const { amount, unit } = splitDelay(minutes);
  return `${amount} ${amount === 1 ? unit.slice(0, -1) : unit}`;
}

function DelayInput(props: { label: string; minutes: number; onChange: (minutes: number) => void }) {
  const [unit, setUnit] = useState<Unit>(() => splitDelay(props.minutes).unit);
  const factor = UNITS.find((entry) => entry.unit === unit)!.minutes;
  const amount = props.minutes / factor;
  return (
    <fieldset class="delay">
      <legend>{props.label}</legend>
      <label>
        <span class="visually-hidden">Delay</span>
        <input
          type="number"
          min={0}
          step="any"
          required
          value={Number.isInteger(amount) ? amount : Number(amount.toFixed(2))}
          onInput={(e) => props.onChange(Math.round(Number(e.currentTarget.value) * factor))}
        />
      </label>
      <label>
        <span class="visually-hidden">Unit</span>
        <select
          value={unit}
          onChange={(e) => {
            const next = e.currentTarget.value as Unit;
            setUnit(next);
            // The number stays; the delay becomes that many of the new unit.
            props.onChange(Math.round(amount * UNITS.find((entry) => entry.unit === next)!.minutes));
          }}
        >
          {UNITS.map((entry) => (
            <option key={entry.unit} value={entry.unit}>
              {entry.unit}
            </option>
          ))}
        </select>
      </label>
      {props.minutes === 0 && <span class="muted">sent at once</span>}
    </fieldset>
  );
}
