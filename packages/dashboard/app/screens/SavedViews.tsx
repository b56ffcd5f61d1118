import { useState } from 'preact/hooks';
import { FILTER_KEYS } from '../api/filters.js';
import { session } from '../api/session.js';
import { TextField } from '../components/fields.js';
import { Form } from '../components/forms.js';
import { setQuery } from '../router.js';

/** What a saved view holds: the list's query (filters, sort, page size) and the columns shown. */
export interface SavedView {
  name: string;
  query: string;
  columns: string[];
}

const VIEW_KEYS = [...FILTER_KEYS, 'sort', 'limit'];

/** The part of the URL a view keeps: no page (a view opens on its first), no open lead. */
export function viewQuery(query: URLSearchParams): string {
  const kept = new URLSearchParams();
  for (const key of VIEW_KEYS) {
    const value = query.get(key);
    if (value) kept.set(key, value);
  }
  return kept.toString();
}

/** One list per signed-in user in this browser. */
function storageKey(): string {
  return `lead-capture.leads.views.${session.user?.id ?? 'anonymous'}`;
}

function storedViews(): SavedView[] {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(storageKey()) ?? '[]');
    if (!Array.isArray(stored)) return [];
    return stored.filter(
      (view): view is SavedView =>
        typeof view?.name === 'string' && typeof view.query === 'string' && Array.isArray(view.columns),
    );
  } catch {
    return [];
  }
}

/**
 * Saved views of the leads list: the current filters, sort and columns under a name, kept in this
 * browser for the signed-in user (localStorage); applied in one click, deleted, replaced by name.
 */
export function SavedViews(props: {
  query: URLSearchParams;
  columns: string[];
  onApplyColumns: (ids: string[]) => void;
}) {
  const [views, setViews] = useState<SavedView[]>(storedViews);
  const [name, setName] = useState('');
  const [message, setMessage] = useState('');
  const current = viewQuery(props.query);
  const store = (next: SavedView[]) => {
    setViews(next);
    try {
      localStorage.setItem(storageKey(), JSON.stringify(next));
    } catch {
      setMessage('This browser could not keep the views (storage full or disabled).');
    }
  };
  const isCurrent = (view: SavedView) =>
    view.query === current && view.columns.join() === props.columns.join();

  return (
    <details class="saved-views">
      <summary>Views{views.length > 0 ? ` (${views.length})` : ''}</summary>
      <div class="saved-views-panel">
        {views.length === 0 ? (
          <p class="muted">No saved view yet: set filters, sort and columns, then save them under a name.</p>
        ) : (
          <ul class="saved-views-list" aria-label="Saved views">
            {views.map((view) => (
              <li key={view.name}>
                <button
                  type="button"
                  class="link"
                  aria-current={isCurrent(view) ? 'true' : undefined}
                  onClick={() => {
                    props.onApplyColumns(view.columns);
                    setQuery(new URLSearchParams(view.query));
                    setMessage(`View "${view.name}" applied.`);
                  }}
                >
                  {view.name}
                </button>
                <button
                  type="button"
                  class="ghost"
                  aria-label={`Delete view ${view.name}`}
                  onClick={() => {
                    store(views.filter((other) => other.name !== view.name));
                    setMessage(`View "${view.name}" deleted.`);
                  }}
                >
                  ✕
                </button>
              </li>
            ))}
          </ul>
        )}
        <Form
          class="inline"
          onSubmit={() => {
            const trimmed = name.trim();
            if (!trimmed) return;
            const replaced = views.some((view) => view.name === trimmed);
            const view = { name: trimmed, query: current, columns: props.columns };
            store(
              replaced ? views.map((other) => (other.name === trimmed ? view : other)) : [...views, view],
            );
            setName('');
            setMessage(replaced ? `View "${trimmed}" replaced.` : `View "${trimmed}" saved.`);
          }}
        >
          <TextField label="View name" value={name} maxLength={60} onValue={setName} />
          <button type="submit">Save current view</button>
        </Form>
        <p class="muted" role="status">
          {message}
        </p>
      </div>
    </details>
  );
}
