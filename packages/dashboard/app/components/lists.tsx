import type { ComponentChildren } from 'preact';

/** A column heading: its label, or one only screen readers hear (a column of buttons). */
export type Column = string | { label: string; hidden?: boolean; class?: string };

export function TableHead({ columns }: { columns: readonly Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((column) => {
          const { label, hidden, class: className } = typeof column === 'string' ? { label: column } : column;
          return (
            <th key={label} scope="col" class={className}>
              {hidden ? <span class="visually-hidden">{label}</span> : label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

/**
 * A list table that turns into labelled cards on a phone (each cell carries its `data-label`),
 * scrolling inside its wrapper on a desktop; `after` follows the table in the wrapper (an empty
 * message).
 */
export function CardTable(props: {
  columns: readonly Column[];
  caption?: string;
  class?: string;
  busy?: boolean;
  after?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table class={props.class ? `card-table ${props.class}` : 'card-table'} aria-busy={props.busy}>
        {props.caption && <caption class="visually-hidden">{props.caption}</caption>}
        <TableHead columns={props.columns} />
        <tbody>{props.children}</tbody>
      </table>
      {props.after}
    </div>
  );
}

/** Previous / Next through the pages of a list, after what `summary` says; `children` follow. */
export function Pager(props: {
  label: string;
  summary: ComponentChildren;
  page: number;
  pages: number;
  onPage: (page: number) => void;
  children?: ComponentChildren;
}) {
  return (
    <nav class="pagination" aria-label={props.label}>
      {props.summary}
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous
      </button>
      <button type="button" disabled={props.page >= props.pages} onClick={() => props.onPage(props.page + 1)}>
        Next
      </button>
      {props.children}
    </nav>
  );
}

/**
 * A list of links that pick one item (a source, a dead-letter group): the picked one is marked
 * `aria-current`; `detail` follows each name, `empty` stands for an empty list.
 */
export function PickList<T>(props: {
  items: readonly T[] | undefined;
  idOf: (item: T) => string;
  nameOf: (item: T) => ComponentChildren;
  detailOf?: (item: T) => ComponentChildren;
  picked: string | undefined;
  onPick: (id: string) => void;
  empty: string;
  class?: string;
  label?: string;
}) {
  return (
    <ul class={props.class} aria-label={props.label}>
      {(props.items ?? []).map((item) => {
        const id = props.idOf(item);
        return (
          <li key={id}>
            <button
              type="button"
              class="link"
              aria-current={id === props.picked ? 'true' : undefined}
              onClick={() => props.onPick(id)}
            >
              {props.nameOf(item)}
            </button>
            {props.detailOf?.(item)}
          </li>
        );
      })}
      {props.items?.length === 0 && <li class="muted">{props.empty}</li>}
    </ul>
  );
}
