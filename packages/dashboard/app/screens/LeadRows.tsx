import { useEffect, useRef } from 'preact/hooks';
import type { LeadListItem } from '../api/client.js';
import type { Sort } from '../api/filters.js';
import { fullName } from '../components/ui.js';
import type { CellContext, LeadColumn } from './LeadColumns.js';

/** A sortable column's heading: a click sorts by it, newest or highest first, then the other way. */
export function SortHeader(props: {
  label: string;
  field: 'score' | 'createdAt';
  sort: Sort;
  onSort: (sort: Sort) => void;
}) {
  const { label, field, sort, onSort } = props;
  const direction = sort === field ? 'ascending' : sort === `-${field}` ? 'descending' : 'none';
  return (
    <th scope="col" aria-sort={direction}>
      <button
        type="button"
        class="sort"
        onClick={() => onSort(direction === 'descending' ? field : (`-${field}` as Sort))}
      >
        {label}
        <span aria-hidden="true">
          {direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}
        </span>
      </button>
    </th>
  );
}

/** The heading checkbox: every row of the page, partly ticked while only some are. */
export function SelectAll(props: { rows: number; selected: number; onChange: (checked: boolean) => void }) {
  const ref = useRef<HTMLInputElement>(null);
  const partly = props.selected > 0 && props.selected < props.rows;
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = partly;
  }, [partly]);
  return (
    <input
      ref={ref}
      type="checkbox"
      aria-label="Select all leads on this page"
      checked={props.rows > 0 && props.selected === props.rows}
      onChange={(event) => props.onChange(event.currentTarget.checked)}
    />
  );
}

/** A lead's row: its checkbox, its name that opens it, then the chosen columns. */
export function LeadRow(props: {
  lead: LeadListItem;
  columns: LeadColumn[];
  context: CellContext;
  fresh: boolean;
  selected: boolean;
  cursor: boolean;
  onSelect: (checked: boolean, range: boolean) => void;
  onOpen: () => void;
}) {
  const { lead, fresh } = props;
  const classes = [fresh && 'fresh', props.selected && 'selected', props.cursor && 'cursor'].filter(Boolean);
  const name = fullName(lead);
  return (
    <tr class={classes.join(' ') || undefined} data-lead-id={lead.id}>
      <td class="select-col">
        <input
          type="checkbox"
          aria-label={`Select ${name}`}
          checked={props.selected}
          onClick={(event) => props.onSelect(event.currentTarget.checked, event.shiftKey)}
        />
      </td>
      <td class="name-col">
        <button type="button" class="link lead-open" onClick={props.onOpen}>
          {name}
        </button>
        {lead.isDuplicate && <span class="badge">duplicate</span>}
        {fresh && <span class="badge badge-new">new</span>}
      </td>
      {props.columns.map((column) => (
        <td
          key={column.id}
          data-label={column.label}
          class={`col-${column.id}${column.numeric ? ' number' : ''}`}
        >
          {column.cell(lead, props.context)}
        </td>
      ))}
    </tr>
  );
}
