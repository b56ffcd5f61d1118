import { CSV_IMPORT_SOURCE } from '@lead-capture/contracts/source-vocabulary';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  api,
  authorizedFetch,
  type LeadListItem,
  QUALIFICATIONS,
  type Source,
  STATUSES,
  type User,
  unwrap,
} from '../api/client.js';
import { exportQuery, FILTER_KEYS, type LeadFilters, readFilters, type Sort } from '../api/filters.js';
import { applyToRow, leadIdsOf, rowFromCaptured } from '../api/live-leads.js';
import { type StreamEvent, type StreamMessage, useStream } from '../api/stream.js';
import { NoLeadsYet } from '../components/empty.js';
import {
  ErrorMessage,
  fullName,
  useAction,
  useLoad,
  useReloadOnReturn,
  useThrottled,
} from '../components/ui.js';
import { updateQuery, useLocation } from '../router.js';
import { BULK_VALUE_ID, type BulkActionType, BulkBar, type BulkReport, BulkReportView } from './BulkBar.js';
import { type CellContext, ColumnChooser, type LeadColumn, useLeadColumns } from './LeadColumns.js';
import { LeadDrawer } from './LeadDrawer.js';
import { ShortcutsDialog, useListShortcuts } from './LeadsShortcuts.js';
import { SavedViews } from './SavedViews.js';

/** Live refreshes of the list: the first at once, then at most one per second under a burst. */
const REFRESH_INTERVAL_MS = 1000;

export function Leads() {
  const { query } = useLocation();
  const { filters, page, limit, sort } = readFilters(query);
  const filterKey = JSON.stringify(filters);
  const openLeadId = query.get('lead') ?? undefined;
  const [columns, toggleColumn, chooseColumns] = useLeadColumns();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [bulkAction, setBulkAction] = useState<BulkActionType>('assign');
  const [bulkReport, setBulkReport] = useState<BulkReport | undefined>(undefined);
  const selectionAnchor = useRef<number | undefined>(undefined);
  const [cursor, setCursor] = useState(-1);
  const [shortcutsOpen, setShortcutsOpen] = useState(false);
  // A selection belongs to the page it was made on: another page, filter or sort starts afresh.
  const viewKey = `${filterKey}|${page}|${limit}|${sort}`;
  useEffect(() => {
    setSelected(new Set());
    selectionAnchor.current = undefined;
    setCursor(-1);
    setBulkReport(undefined);
  }, [viewKey]);

  const list = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/leads', {
          params: { query: { ...(filters as LeadFilters), page, limit, sort } as never },
        }),
      ),
    [filterKey, page, limit, sort],
  );
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [pendingNew, setPendingNew] = useState(0);
  const [announcement, setAnnouncement] = useState('');
  const shownIds = useRef<Set<string>>(new Set());
  const awaitingIds = useRef<Set<string>>(new Set());

  // Rows that arrived live are highlighted (and announced) once they are in the refreshed page.
  useEffect(() => {
    const rows = list.data?.data ?? [];
    const arrived = rows.filter((row) => awaitingIds.current.has(row.id) && !shownIds.current.has(row.id));
    shownIds.current = new Set(rows.map((row) => row.id));
    if (arrived.length === 0) return;
    for (const row of arrived) awaitingIds.current.delete(row.id);
    setFresh((current) => new Set([...current, ...arrived.map((row) => row.id)]));
    setAnnouncement(arrived.length === 1 ? '1 new lead' : `${arrived.length} new leads`);
  }, [list.data]);

  const refresh = useThrottled(() => void list.reload(), REFRESH_INTERVAL_MS);
  // A new lead shifts rows only on the first page of the newest-first order; elsewhere the user's
  // page stays as it is and a button offers the new leads.
  const followsNewLeads = page === 1 && sort === '-createdAt';
  // Without filters that view is decided here: rows come straight from the events (no request,
  // so a lead shows as soon as its lead.captured arrives); with filters the server decides.
  const rendersEvents = followsNewLeads && !FILTER_KEYS.some((key) => query.get(key));

  function showCaptured(message: StreamEvent): boolean {
    const row = rowFromCaptured(message);
    if (!row || !list.data) return false;
    if (!shownIds.current.has(row.id)) {
      shownIds.current.add(row.id);
      list.setData((current) => {
        if (!current || current.data.some((shown) => shown.id === row.id)) return current;
        const total = current.pagination.total + 1;
        return {
          data: [row, ...current.data].slice(0, limit),
          pagination: { ...current.pagination, total, pages: Math.ceil(total / limit) },
        };
      });
      setFresh((current) => new Set([...current, row.id]));
      setAnnouncement(`New lead: ${fullName(row)}`);
    }
    return true;
  }

  useStream((message: StreamMessage) => {
    if (message.type === 'reset') {
      reloadSources();
      return refresh();
    }
    if (message.type === 'lead.captured') {
      const sourceId =
        (message.data.lead as { sourceId?: unknown } | undefined)?.sourceId ?? message.data.sourceId;
      if (
        typeof sourceId === 'string' &&
        sources.data &&
        !sources.data.some((source) => source.id === sourceId)
      )
        reloadSources();
    }
    if (message.type === 'lead.import_progress' || message.type === 'lead.enrolled') return;
    if (message.type === 'lead.captured') {
      if (rendersEvents && showCaptured(message)) return;
      const leadId = String(message.data.leadId ?? '');
      if (followsNewLeads) {
        awaitingIds.current.add(leadId);
        refresh();
      } else {
        setPendingNew((count) => count + 1);
      }
      return;
    }
    if (message.type === 'lead.updated' && changesNoColumn(message.data.changes)) return;
    const shown = leadIdsOf(message).filter((id) => shownIds.current.has(id));
    if (shown.length === 0) return;
    if (rendersEvents && (message.type === 'lead.scored' || message.type === 'lead.updated')) {
      list.setData(
        (current) =>
          current && {
            ...current,
            data: current.data.map((row) => (row.id === shown[0] ? applyToRow(row, message) : row)),
          },
      );
      return;
    }
    refresh();
  });

  function update(changes: Record<string, string | undefined>, resetPage = true) {
    updateQuery(resetPage ? { ...changes, page: undefined } : changes, { replace: true });
  }

  // The filter offers every source, and the CSV import's (its leads have that source, not one of
  // the workspace's sources). Sources created elsewhere: asked again on returning to the page, after
  // a stream reconnect, and when a lead arrives from a source the list does not know.
  const sources = useLoad(async () => [...unwrap(await api.GET('/api/sources')), CSV_IMPORT_SOURCE], []);
  useReloadOnReturn(sources.reload);
  const reloadSources = useThrottled(() => void sources.reload(), REFRESH_INTERVAL_MS);
  // The user list is for admins; others filter by "me" and "unassigned".
  const users = useLoad(async () => {
    const result = await api.GET('/api/users');
    return result.data ?? ([] as User[]);
  }, []);

  const pagination = list.data?.pagination;
  const exportAction = useAction();
  const rows = list.data?.data ?? [];
  const selectedRows = rows.filter((row) => selected.has(row.id));
  const cellContext: CellContext = useMemo(
    () => ({ usersById: new Map((users.data ?? []).map((user) => [user.id, user])) }),
    [users.data],
  );

  /** A click on a row's checkbox; with Shift, every row from the previous click takes its state. */
  function toggleRow(index: number, checked: boolean, range: boolean) {
    const anchor = selectionAnchor.current;
    const [from, to] =
      range && anchor !== undefined ? [Math.min(anchor, index), Math.max(anchor, index)] : [index, index];
    setSelected((current) => {
      const next = new Set(current);
      for (const row of rows.slice(from, to + 1)) {
        if (checked) next.add(row.id);
        else next.delete(row.id);
      }
      return next;
    });
    selectionAnchor.current = index;
  }

  function selectPage(checked: boolean) {
    setSelected(checked ? new Set(rows.map((row) => row.id)) : new Set());
    selectionAnchor.current = undefined;
  }

  function focusRow(index: number) {
    const row = rows[index];
    if (!row) return;
    setCursor(index);
    document.querySelector<HTMLButtonElement>(`tr[data-lead-id="${row.id}"] button.lead-open`)?.focus();
  }

  useListShortcuts({
    next: () => focusRow(Math.min(rows.length - 1, cursor + 1)),
    previous: () => focusRow(Math.max(0, cursor - 1)),
    open: () => {
      const row = rows[cursor];
      if (row) update({ lead: row.id }, false);
    },
    toggle: () => {
      if (rows[cursor]) toggleRow(cursor, !selected.has(rows[cursor].id), false);
    },
    assign: () => {
      const row = rows[cursor];
      if (selected.size === 0 && row) setSelected(new Set([row.id]));
      if (selected.size === 0 && !row) return;
      setBulkAction('assign');
      requestAnimationFrame(() => document.getElementById(BULK_VALUE_ID)?.focus());
    },
    search: () => document.querySelector<HTMLInputElement>('input[name="search"]')?.focus(),
    help: () => setShortcutsOpen(true),
  });

  async function exportCsv() {
    await exportAction.run(async () => {
      const response = await authorizedFetch(new Request(`/api/leads/export?${exportQuery(filters, sort)}`));
      if (!response.ok) {
        const body = (await response.json().catch(() => ({}))) as { error?: string };
        throw new Error(body.error ?? `Export failed (${response.status})`);
      }
      const url = URL.createObjectURL(await response.blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = `leads-${new Date().toISOString().slice(0, 10)}.csv`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  }

  return (
    <section aria-labelledby="leads-title">
      <div class="toolbar">
        <h1 id="leads-title">Leads</h1>
        <SavedViews
          query={query}
          columns={columns.map((column) => column.id)}
          onApplyColumns={chooseColumns}
        />
        <ColumnChooser shown={columns} onToggle={toggleColumn} />
        <button type="button" class="ghost" onClick={() => setShortcutsOpen(true)} aria-keyshortcuts="?">
          Shortcuts
        </button>
        <button type="button" onClick={() => void exportCsv()} disabled={exportAction.pending}>
          {exportAction.pending ? 'Exporting…' : 'Export CSV'}
        </button>
      </div>
      {shortcutsOpen && <ShortcutsDialog onClose={() => setShortcutsOpen(false)} />}
      <ErrorMessage error={exportAction.error} />
      <Filters
        query={query}
        sources={sources.data ?? []}
        users={users.data ?? []}
        onChange={(changes) => update(changes)}
      />
      <p class="visually-hidden" aria-live="polite">
        {announcement}
      </p>
      {pendingNew > 0 && (
        <button
          type="button"
          class="new-leads"
          onClick={() => {
            setPendingNew(0);
            update({ page: undefined, sort: undefined });
          }}
        >
          {pendingNew === 1 ? '1 new lead' : `${pendingNew} new leads`} — show the newest
        </button>
      )}
      <ErrorMessage error={list.error} />
      {selectedRows.length > 0 && (
        <BulkBar
          selected={selectedRows}
          users={users.data ?? []}
          action={bulkAction}
          onActionChange={setBulkAction}
          onClear={() => selectPage(false)}
          onDone={(report, deletedIds) => {
            setBulkReport(report);
            setSelected((current) => new Set([...current].filter((id) => !deletedIds.includes(id))));
            void list.reload();
          }}
        />
      )}
      <BulkReportView report={bulkReport} />
      <div class="list-controls phone-only">
        <label class="check">
          <input
            type="checkbox"
            checked={rows.length > 0 && selectedRows.length === rows.length}
            onChange={(event) => selectPage(event.currentTarget.checked)}
          />{' '}
          Select all on this page
        </label>
        <label>
          Sort{' '}
          <select value={sort} onChange={(event) => update({ sort: event.currentTarget.value })}>
            <option value="-createdAt">Newest first</option>
            <option value="createdAt">Oldest first</option>
            <option value="-score">Highest score</option>
            <option value="score">Lowest score</option>
          </select>
        </label>
      </div>
      <div class="table-wrap">
        <table class="leads" aria-busy={list.loading} aria-describedby="leads-count">
          <caption class="visually-hidden">Leads matching the filters</caption>
          <thead>
            <tr>
              <th scope="col" class="select-col">
                <SelectAll
                  rows={rows.length}
                  selected={selectedRows.length}
                  onChange={(checked) => selectPage(checked)}
                />
              </th>
              <th scope="col">Name</th>
              {columns.map((column) =>
                column.sortField ? (
                  <SortHeader
                    key={column.id}
                    label={column.label}
                    field={column.sortField}
                    sort={sort}
                    onSort={(next) => update({ sort: next })}
                  />
                ) : (
                  <th key={column.id} scope="col">
                    {column.label}
                  </th>
                ),
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((lead, index) => (
              <LeadRow
                key={lead.id}
                lead={lead}
                columns={columns}
                context={cellContext}
                fresh={fresh.has(lead.id)}
                selected={selected.has(lead.id)}
                cursor={index === cursor}
                onSelect={(checked, range) => toggleRow(index, checked, range)}
                onOpen={() => {
                  setCursor(index);
                  update({ lead: lead.id }, false);
                }}
              />
            ))}
          </tbody>
        </table>
        {list.data?.data.length === 0 &&
          (Object.keys(filters).length === 0 && list.data.pagination.total === 0 ? (
            <NoLeadsYet />
          ) : (
            <p class="empty">No lead matches these filters.</p>
          ))}
      </div>
      {pagination && (
        <nav class="pagination" aria-label="Pages">
          <span id="leads-count">
            {pagination.total} {pagination.total === 1 ? 'lead' : 'leads'} · page {pagination.page} of{' '}
            {Math.max(1, pagination.pages)}
          </span>
          <button
            type="button"
            disabled={page <= 1}
            onClick={() => update({ page: String(page - 1) }, false)}
          >
            Previous
          </button>
          <button
            type="button"
            disabled={page >= pagination.pages}
            onClick={() => update({ page: String(page + 1) }, false)}
          >
            Next
          </button>
          <label>
            Per page{' '}
            <select value={String(limit)} onChange={(event) => update({ limit: event.currentTarget.value })}>
              {[20, 50, 100].map((size) => (
                <option key={size} value={String(size)}>
                  {size}
                </option>
              ))}
            </select>
          </label>
        </nav>
      )}
      {openLeadId && (
        <LeadDrawer
          leadId={openLeadId}
          users={users.data ?? []}
          onClose={() => update({ lead: undefined }, false)}
          onChanged={() => void list.reload()}
          onOpenLead={(id) => update({ lead: id }, false)}
        />
      )}
    </section>
  );
}

/** Notes (the field or the history) are in no column: a change of them alone asks for nothing. */
const UNLISTED_CHANGES = new Set(['notes', 'noteAdded', 'noteDeleted']);
function changesNoColumn(changes: unknown): boolean {
  if (!changes || typeof changes !== 'object') return false;
  const keys = Object.keys(changes);
  return keys.length > 0 && keys.every((key) => UNLISTED_CHANGES.has(key));
}

function SortHeader(props: {
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

function SelectAll(props: { rows: number; selected: number; onChange: (checked: boolean) => void }) {
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

function LeadRow(props: {
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

function Filters(props: {
  query: URLSearchParams;
  sources: Array<Pick<Source, 'id' | 'name'>>;
  users: User[];
  onChange: (changes: Record<string, string | undefined>) => void;
}) {
  const { query, sources, users, onChange } = props;
  const [search, setSearch] = useState(query.get('search') ?? '');
  const [tag, setTag] = useState(query.get('tag') ?? '');
  const active = FILTER_KEYS.some((key) => query.get(key));

  return (
    <form
      class="filters"
      aria-label="Filters"
      onSubmit={(event) => {
        event.preventDefault();
        onChange({ search: search.trim() || undefined, tag: tag.trim() || undefined });
      }}
    >
      <label>
        Search
        <input
          type="search"
          name="search"
          placeholder="Name, e-mail, phone, company"
          value={search}
          maxLength={200}
          onInput={(event) => setSearch(event.currentTarget.value)}
          onBlur={() => onChange({ search: search.trim() || undefined })}
        />
      </label>
      <label>
        Status
        <select
          value={query.get('status') ?? ''}
          onChange={(e) => onChange({ status: e.currentTarget.value })}
        >
          <option value="">Any</option>
          {STATUSES.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </label>
      <label>
        Qualification
        <select
          value={query.get('qualification') ?? ''}
          onChange={(e) => onChange({ qualification: e.currentTarget.value })}
        >
          <option value="">Any</option>
          {QUALIFICATIONS.map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>
      </label>
      <label>
        Source
        <select
          value={query.get('sourceId') ?? ''}
          onChange={(e) => onChange({ sourceId: e.currentTarget.value })}
        >
          <option value="">Any</option>
          {sources.map((source) => (
            <option key={source.id} value={source.id}>
              {source.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Assignee
        <select
          value={query.get('assignedTo') ?? ''}
          onChange={(e) => onChange({ assignedTo: e.currentTarget.value })}
        >
          <option value="">Anyone</option>
          <option value="unassigned">Unassigned</option>
          {users.map((user) => (
            <option key={user.id} value={user.id}>
              {user.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Tag
        <input
          type="text"
          name="tag"
          value={tag}
          maxLength={100}
          onInput={(event) => setTag(event.currentTarget.value)}
          onBlur={() => onChange({ tag: tag.trim() || undefined })}
        />
      </label>
      <label>
        Duplicates
        <select
          value={query.get('duplicates') ?? ''}
          onChange={(e) => onChange({ duplicates: e.currentTarget.value })}
        >
          <option value="">Shown</option>
          <option value="exclude">Hidden</option>
          <option value="only">Only duplicates</option>
        </select>
      </label>
      <label>
        From
        <input
          type="date"
          value={query.get('startDate') ?? ''}
          onChange={(e) => onChange({ startDate: e.currentTarget.value })}
        />
      </label>
      <label>
        To
        <input
          type="date"
          value={query.get('endDate') ?? ''}
          onChange={(e) => onChange({ endDate: e.currentTarget.value })}
        />
      </label>
      <div class="filter-actions">
        <button type="submit">Apply</button>
        {active && (
          <button
            type="button"
            class="ghost"
            onClick={() => {
              setSearch('');
              setTag('');
              onChange(Object.fromEntries(FILTER_KEYS.map((key) => [key, undefined])));
            }}
          >
            Clear filters
          </button>
        )}
      </div>
    </form>
  );
}
