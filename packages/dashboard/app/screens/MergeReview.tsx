import { useState } from 'preact/hooks';
import { api, type MergePreview, type User, unwrap } from '../api/client.js';
import { ActionButton, ErrorMessage, Status as Loading, useAction, useLoad } from '../components/ui.js';

const FIELD_LABELS: Record<MergePreview['fields'][number]['field'], string> = {
  firstName: 'First name',
  lastName: 'Last name',
  email: 'E-mail',
  phone: 'Phone',
  company: 'Company',
  assignedTo: 'Assignee',
  score: 'Score',
  qualification: 'Qualification',
};

/** Why the lead was flagged, from what the two leads share ("the same e-mail and phone"). */
export function matchReason(matchedOn: MergePreview['matchedOn']): string {
  const words = matchedOn.map((key) => (key === 'email' ? 'e-mail' : 'phone'));
  return words.length === 0
    ? 'it matches another of its duplicates (by e-mail or phone)'
    : `of the same ${words.join(' and ')}`;
}

/** The merge preview of `duplicateId` into `primaryId` (GET /api/leads/<id>/merge-preview). */
export function useMergePreview(primaryId: string, duplicateId: string, version?: string) {
  return useLoad(
    async () =>
      unwrap(
        await api.GET('/api/leads/{id}/merge-preview', {
          params: { path: { id: primaryId }, query: { duplicateId } },
        }),
      ),
    [primaryId, duplicateId, version],
  );
}

/**
 * What a merge will write, before it is done: each field side by side with the value the merged
 * lead keeps marked, what is combined, then Merge asks for confirmation.
 */
export function MergeReview(props: {
  primaryId: string;
  duplicateId: string;
  primaryLabel: string;
  duplicateLabel: string;
  users: User[];
  onMerged: () => void;
  onCancel: () => void;
}) {
  const { primaryLabel, duplicateLabel } = props;
  const preview = useMergePreview(props.primaryId, props.duplicateId);
  const action = useAction();
  const show = (field: string, value: string | number | null) => {
    if (value === null || value === '') return '—';
    if (field === 'assignedTo') return props.users.find((user) => user.id === value)?.name ?? String(value);
    return String(value);
  };
  const cell = (
    entry: MergePreview['fields'][number],
    side: 'primary' | 'duplicate',
    value: string | number | null,
  ) => {
    const wins = entry.winner === side || entry.winner === 'same';
    return (
      <td class={wins ? 'wins' : undefined}>
        {show(entry.field, value)}
        {wins && <span class="kept"> ✓ kept</span>}
      </td>
    );
  };
  return (
    <section class="merge-review" aria-label={`Merge ${duplicateLabel} into ${primaryLabel}`}>
      <ErrorMessage error={preview.error} />
      {!preview.data && !preview.error && <Loading>Preparing the merge preview…</Loading>}
      {preview.data && (
        <>
          <p>Flagged as a duplicate because {matchReason(preview.data.matchedOn)}.</p>
          <table class="merge-fields">
            <caption>What the merged lead keeps</caption>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">{primaryLabel} (stays)</th>
                <th scope="col">{duplicateLabel} (merged in)</th>
              </tr>
            </thead>
            <tbody>
              {preview.data.fields.map((entry) => (
                <tr key={entry.field} data-field={entry.field} data-winner={entry.winner}>
                  <th scope="row">{FIELD_LABELS[entry.field]}</th>
                  {cell(entry, 'primary', entry.primary)}
                  {cell(entry, 'duplicate', entry.duplicate)}
                </tr>
              ))}
            </tbody>
          </table>
          <p class="muted">
            Combined from both: tags, custom fields ({primaryLabel}'s win), UTM parameters, notes and their
            history, notifications, sequence enrolments and the timeline. {duplicateLabel} is then deleted.
          </p>
          <div class="actions">
            <ActionButton
              question={`Merge ${duplicateLabel} into ${primaryLabel}? ${duplicateLabel} will be deleted; this cannot be undone.`}
              action={action}
              onRun={async () =>
                unwrap(
                  await api.POST('/api/leads/{id}/merge', {
                    params: { path: { id: props.primaryId } },
                    body: { duplicateId: props.duplicateId },
                  }),
                )
              }
              onDone={props.onMerged}
            >
              Merge
            </ActionButton>
            <button type="button" class="ghost" onClick={props.onCancel}>
              Cancel
            </button>
          </div>
        </>
      )}
      <ErrorMessage error={action.error} />
    </section>
  );
}

/** A merge opened from a button: the preview shows once asked for. */
export function MergeToggle(props: Omit<Parameters<typeof MergeReview>[0], 'onCancel'> & { label: string }) {
  const [open, setOpen] = useState(false);
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        {props.label}
      </button>
    );
  return <MergeReview {...props} onCancel={() => setOpen(false)} />;
}
