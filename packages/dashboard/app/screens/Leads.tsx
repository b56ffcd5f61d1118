import { CSV_IMPORT_SOURCE } from '@lead-capture/contracts/source-vocabulary';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, authorizedFetch, type User, unwrap } from '../api/client.js';
import { exportQuery, FILTER_KEYS, type LeadFilters as Filters, readFilters } from '../api/filters.js';
import { applyToRow, leadIdsOf, rowFromCaptured } from '../api/live-leads.js';
import { type StreamEvent, type StreamMessage, useStream } from '../api/stream.js';
import { NoLeadsYet } from '../components/empty.js';
import { Options } from '../components/fields.js';
import { Pager } from '../components/lists.js';
import { TitledSection } from '../components/sections.js';
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
import { type CellContext, ColumnChooser, useLeadColumns } from './LeadColumns.js';
import { LeadDrawer } from './LeadDrawer.js';
import { LeadFilters } from './LeadFilters.js';
import { LeadRow, SelectAll, SortHeader } from './LeadRows.js';
import { ShortcutsDialog, useListShortcuts } from './LeadsShortcuts.js';
import { SavedViews } from './SavedViews.js';

/** Live refreshes of the list: the first at once, then at most one per second under a burst. */
const REFRESH_INTERVAL_MS = 1000;
/** A failed load of the list is tried again after 5 s, then twice as long each time, up to a minute. */
const RETRY_FIRST_MS = 5000;
const RETRY_MAX_MS = 60_000;

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
          params: { query: { ...(filters as Filters), page, limit, sort } as never },
        }),
      ),
    [filterKey, page, limit, sort],
  );
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [pendingNew, setPendingNew] = useState(0);
  const [announcement, setAnnouncement] = useState('');
  const shownIds = useRef<Set<string>>(new Set());
  /**
   * New leads not listed yet, by how far they are: `captured`; `scored` (the next load that still
   * lacks it asks once more); `askedAgain` (a load after that still lacking it gives it up).
   */
  const awaiting = useRef<Map<string, 'captured' | 'scored' | 'askedAgain'>>(new Map());

  // Rows that arrived live are highlighted (and announced) once they are in the refreshed page.
  useEffect(() => {
    const rows = list.data?.data ?? [];
    const arrived = rows.filter((row) => awaiting.current.has(row.id) && !shownIds.current.has(row.id));
    shownIds.current = new Set(rows.map((row) => row.id));
    // A scored lead this load still lacks: the load may have been asked for before its scoring
    // (lead.captured and lead.scored can come in one go, and share one reload). Asked once more;
    // still missing then, it does not match the filters, and is no longer awaited.
    for (const [id, stage] of awaiting.current) {
      if (shownIds.current.has(id) || stage === 'askedAgain') awaiting.current.delete(id);
      else if (stage === 'scored') {
        awaiting.current.set(id, 'askedAgain');
        refresh();
      }
    }
    if (arrived.length === 0) return;
    setFresh((current) => new Set([...current, ...arrived.map((row) => row.id)]));
    setAnnouncement(arrived.length === 1 ? '1 new lead' : `${arrived.length} new leads`);
  }, [list.data]);

  const refresh = useThrottled(() => void list.reload(), REFRESH_INTERVAL_MS);
  // A load that failed (the connection dropped, too many requests) is not left stale under its
  // error: tried again when the browser is back online, and after 5 s, 10 s… (at most a minute),
  // until one goes through (the error then clears, which ends this).
  useEffect(() => {
    if (!list.error) return;
    let delay = RETRY_FIRST_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const retry = () => {
      clearTimeout(timer);
      void list.reload();
      delay = Math.min(RETRY_MAX_MS, delay * 2);
      timer = setTimeout(retry, delay);
    };
    timer = setTimeout(retry, delay);
    addEventListener('online', retry);
    return () => {
      clearTimeout(timer);
      removeEventListener('online', retry);
    };
  }, [list.error, list.reload]);
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
        awaiting.current.set(leadId, 'captured');
        refresh();
      } else {
        setPendingNew((count) => count + 1);
      }
      return;
    }
    if (message.type === 'lead.updated' && changesNoColumn(message.data.changes)) return;
    // A new lead the server has not listed yet is asked for again when it is scored: the reload
    // on its capture may have run before its qualification and score were known (a "hot" filter).
    const awaitedScored =
      message.type === 'lead.scored' ? leadIdsOf(message).filter((id) => awaiting.current.has(id)) : [];
    if (awaitedScored.length > 0) {
      for (const id of awaitedScored) awaiting.current.set(id, 'scored');
      return refresh();
    }
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
  // A page past the last one (its leads deleted or merged away, a filter narrowed, an old link):
  // the last page that has leads is shown instead of an empty one saying nothing matches.
  const lastPage = pagination && pagination.total > 0 && page > pagination.pages ? pagination.pages : 0;
  useEffect(() => {
    if (lastPage > 0) update({ page: lastPage === 1 ? undefined : String(lastPage) }, false);
  }, [lastPage]);
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
    <TitledSection
      id="leads-title"
      title="Leads"
      actions={
        <>
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
        </>
      }
    >
      {shortcutsOpen && <ShortcutsDialog onClose={() => setShortcutsOpen(false)} />}
      <ErrorMessage error={exportAction.error} />
      <LeadFilters
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
        <Pager
          label="Pages"
          summary={
            <span id="leads-count">
              {pagination.total} {pagination.total === 1 ? 'lead' : 'leads'} · page {pagination.page} of{' '}
              {Math.max(1, pagination.pages)}
            </span>
          }
          page={page}
          pages={pagination.pages}
          onPage={(next) => update({ page: String(next) }, false)}
        >
          <label>
            Per page{' '}
            <select value={String(limit)} onChange={(event) => update({ limit: event.currentTarget.value })}>
              <Options choices={[20, 50, 100]} />
            </select>
          </label>
        </Pager>
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
    </TitledSection>
  );
}

/** Notes (the field or the history) are in no column: a change of them alone asks for nothing. */
const UNLISTED_CHANGES = new Set(['notes', 'noteAdded', 'noteDeleted']);
function changesNoColumn(changes: unknown): boolean {
  if (!changes || typeof changes !== 'object') return false;
  const keys = Object.keys(changes);
  return keys.length > 0 && keys.every((key) => UNLISTED_CHANGES.has(key));
}
