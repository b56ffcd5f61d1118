import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { LeadListItem, User } from '../api/client.js';
import { formatDate } from '../components/ui.js';

/** What a cell may need besides its lead. */
export interface CellContext {
  usersById: Map<string, User>;
}

export interface LeadColumn {
  id: string;
  label: string;
  /** Sorted by the API (the header is a sort button). */
  sortField?: 'score' | 'createdAt';
  numeric?: boolean;
  cell: (lead: LeadListItem, context: CellContext) => ComponentChildren;
}

/** Every column the leads table can show, in display order. Name is always shown, before these. */
export const LEAD_COLUMNS: readonly LeadColumn[] = [
  { id: 'email', label: 'E-mail', cell: (lead) => lead.email ?? '—' },
  { id: 'phone', label: 'Phone', cell: (lead) => lead.phone ?? '—' },
  { id: 'company', label: 'Company', cell: (lead) => lead.company ?? '—' },
  {
    id: 'status',
    label: 'Status',
    cell: (lead) => <span class={`status status-${lead.status}`}>{lead.status}</span>,
  },
  { id: 'score', label: 'Score', sortField: 'score', numeric: true, cell: (lead) => lead.score },
  {
    id: 'qualification',
    label: 'Qualification',
    cell: (lead) =>
      lead.qualification ? <span class={`q q-${lead.qualification}`}>{lead.qualification}</span> : '—',
  },
  {
    id: 'owner',
    label: 'Owner',
    cell: (lead, { usersById }) =>
      lead.assignedTo === null ? '—' : (usersById.get(lead.assignedTo)?.name ?? 'Assigned'),
  },
  {
    id: 'stage',
    label: 'Stage',
    cell: (lead) => (lead.stage ? <span title={lead.pipeline?.name}>{lead.stage.name}</span> : '—'),
  },
  {
    id: 'tags',
    label: 'Tags',
    cell: (lead) =>
      lead.tags.length === 0 ? (
        '—'
      ) : (
        <span class="tag-list">
          {lead.tags.map((tag) => (
            <span key={tag.name} class="tag">
              {tag.name}
            </span>
          ))}
        </span>
      ),
  },
  {
    id: 'source',
    label: 'Source',
    cell: (lead) => `${lead.source.name}${lead.source.deleted ? ' (deleted)' : ''}`,
  },
  {
    id: 'createdAt',
    label: 'Created',
    sortField: 'createdAt',
    cell: (lead) => <time dateTime={lead.createdAt}>{formatDate(lead.createdAt)}</time>,
  },
];

/** The columns shown until the user chooses: the table as it always was. */
export const DEFAULT_COLUMNS = [
  'email',
  'company',
  'status',
  'score',
  'qualification',
  'source',
  'createdAt',
];

const STORAGE_KEY = 'lead-capture.leads.columns';

function storedColumns(): string[] {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null');
    if (Array.isArray(stored)) {
      const known = stored.filter((id): id is string => LEAD_COLUMNS.some((column) => column.id === id));
      if (known.length > 0 || stored.length === 0) return known;
    }
  } catch {
    // A value this version cannot read: the default columns.
  }
  return DEFAULT_COLUMNS;
}

/** The chosen columns, remembered in this browser (localStorage), in display order. */
export function useLeadColumns(): [
  LeadColumn[],
  (id: string, shown: boolean) => void,
  /** Shows exactly these columns (a saved view's). */
  (ids: string[]) => void,
] {
  const [chosen, setChosen] = useState<string[]>(storedColumns);
  const choose = (next: string[]) => {
    const known = next.filter((id) => LEAD_COLUMNS.some((column) => column.id === id));
    setChosen(known);
    try {
      localStorage.setItem(STORAGE_KEY, JSON.stringify(known));
    } catch {
      // Storage full or disabled: the choice holds for this page only.
    }
  };
  const toggle = (id: string, shown: boolean) =>
    choose(shown ? [...new Set([...chosen, id])] : chosen.filter((column) => column !== id));
  return [LEAD_COLUMNS.filter((column) => chosen.includes(column.id)), toggle, choose];
}

/** A "Columns" menu of checkboxes, one per column. */
export function ColumnChooser(props: {
  shown: LeadColumn[];
  onToggle: (id: string, shown: boolean) => void;
}) {
  return (
    <details class="column-chooser">
      <summary>Columns</summary>
      <fieldset>
        <legend class="visually-hidden">Columns shown</legend>
        {LEAD_COLUMNS.map((column) => (
          <label key={column.id} class="check">
            <input
              type="checkbox"
              name={`column-${column.id}`}
              checked={props.shown.some((shown) => shown.id === column.id)}
              onChange={(event) => props.onToggle(column.id, event.currentTarget.checked)}
            />{' '}
            {column.label}
          </label>
        ))}
      </fieldset>
    </details>
  );
}
