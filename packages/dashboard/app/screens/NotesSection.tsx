import { useState } from 'preact/hooks';
import { api, inPath, type LeadDetail, unwrap } from '../api/client.js';
import { session } from '../api/session.js';
import { useStream } from '../api/stream.js';
import { Form } from '../components/forms.js';
import { TitledSection } from '../components/sections.js';
import { ActionButton, ErrorMessage, formatDate, Status, useAction, useLoad } from '../components/ui.js';

/** The newest notes the drawer shows (the API's largest page). */
const NOTES_SHOWN = 100;

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

/** "5 minutes ago", "yesterday"; "just now" under a minute. */
export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  if (Number.isNaN(seconds)) return iso;
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

/** A time shown relative to now, the absolute date and time in its tooltip. */
export function RelativeTime({ iso }: { iso: string }) {
  return (
    <time dateTime={iso} title={formatDate(iso)}>
      {relativeTime(iso)}
    </time>
  );
}

/**
 * The lead's notes as a history (GET/POST/DELETE /api/leads/<id>/notes): who wrote each one and when,
 * newest first, an add box, and a delete for the author or an admin. The contract's single `notes`
 * field, when set (by an integration, an older version or a merge), is shown above as the pinned note.
 */
export function NotesSection({
  lead,
  onChanged,
}: {
  lead: LeadDetail;
  onChanged: (lead: LeadDetail) => void;
}) {
  const leadId = lead.id;
  const notes = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/leads/{id}/notes', {
          params: { path: { id: leadId }, query: { limit: NOTES_SHOWN } },
        }),
      ),
    [leadId],
  );
  useStream((message) => {
    if (message.type === 'reset') return void notes.reload();
    const changes = message.data.changes as Record<string, unknown> | undefined;
    if (message.data.leadId === leadId && changes && ('noteAdded' in changes || 'noteDeleted' in changes)) {
      void notes.reload();
    }
  });
  const [text, setText] = useState('');
  const add = useAction();
  const remove = useAction();
  const deleteNote = async (noteId: string) =>
    unwrap(await api.DELETE('/api/leads/{id}/notes/{noteId}', inPath({ id: leadId, noteId })));
  const me = session.user;

  async function submit() {
    if (text.trim() === '') return;
    const ok = await add.run(async () =>
      unwrap(await api.POST('/api/leads/{id}/notes', { params: { path: { id: leadId } }, body: { text } })),
    );
    if (ok) {
      setText('');
      await notes.reload();
    }
  }

  const list = notes.data?.data ?? [];
  const total = notes.data?.pagination.total ?? 0;
  return (
    <TitledSection id="lead-notes" level={3} title="Notes">
      {lead.notes && <PinnedNote lead={lead} onChanged={onChanged} />}
      <Form
        class="note-add"
        onSubmit={() => {
          void submit();
        }}
      >
        <label for="lead-note-text">Add a note</label>
        <textarea
          id="lead-note-text"
          rows={3}
          maxLength={10_000}
          value={text}
          placeholder="What happened, what comes next… (Ctrl+Enter adds it)"
          onInput={(event) => setText(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void submit();
            }
          }}
        />
        <ErrorMessage error={add.error} />
        <button type="submit" class="primary" disabled={add.pending || text.trim() === ''}>
          {add.pending ? 'Adding…' : 'Add note'}
        </button>
      </Form>
      <ErrorMessage error={notes.error ?? remove.error} />
      {notes.data && list.length === 0 && !lead.notes && <p class="muted">No notes yet.</p>}
      {!notes.data && !notes.error && <Status>Loading the notes…</Status>}
      <ol class="notes" aria-label="Notes, newest first">
        {list.map((note) => {
          const mine = me !== undefined && note.author.userId === me.id;
          return (
            <li key={note.id} class="note" data-note-id={note.id}>
              <p class="note-meta">
                <strong>
                  {note.author.name ?? (note.author.userId ? 'A former user' : 'An integration')}
                </strong>
                {note.author.apiKeyId && <span class="muted"> (API key)</span>} ·{' '}
                <RelativeTime iso={note.createdAt} />
                {(mine || me?.role === 'admin') && (
                  <ActionButton
                    class="link note-delete"
                    action={remove}
                    label={`Delete the note of ${formatDate(note.createdAt)}`}
                    question="Delete this note? This cannot be undone."
                    onRun={() => deleteNote(note.id)}
                    onDone={notes.reload}
                  >
                    Delete
                  </ActionButton>
                )}
              </p>
              <p class="note-text">{note.text}</p>
            </li>
          );
        })}
      </ol>
      {total > list.length && (
        <p class="muted">
          The {list.length} newest of {total} notes are shown.
        </p>
      )}
    </TitledSection>
  );
}

/** The contract's `notes` field: one text, replaced as a whole (PUT /api/leads/<id>/notes). */
function PinnedNote({ lead, onChanged }: { lead: LeadDetail; onChanged: (lead: LeadDetail) => void }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(lead.notes ?? '');
  const action = useAction();
  const save = (notes: string) =>
    action.run(async () => {
      onChanged(
        unwrap(
          await api.PUT('/api/leads/{id}/notes', { params: { path: { id: lead.id } }, body: { notes } }),
        ),
      );
      setEditing(false);
    });
  return (
    <div class="note pinned">
      <p class="note-meta">
        <strong>Pinned note</strong> <span class="muted">(the lead's notes field)</span>
        {!editing && (
          <button
            type="button"
            class="link"
            onClick={() => {
              setValue(lead.notes ?? '');
              setEditing(true);
            }}
          >
            Edit
          </button>
        )}
      </p>
      {editing ? (
        <Form
          onSubmit={() => {
            void save(value);
          }}
        >
          <label class="visually-hidden" for="lead-pinned-note">
            Pinned note
          </label>
          <textarea
            id="lead-pinned-note"
            rows={3}
            maxLength={10_000}
            value={value}
            onInput={(event) => setValue(event.currentTarget.value)}
          />
          <ErrorMessage error={action.error} />
          <div class="actions">
            <button type="submit" disabled={action.pending}>
              Save
            </button>
            <button type="button" class="ghost" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </Form>
      ) : (
        <p class="note-text">{lead.notes}</p>
      )}
    </div>
  );
}
