import { useEffect, useState } from 'preact/hooks';
import { api, authorizedFetch, type ImportReport, unwrap } from '../api/client.js';
import { useStream } from '../api/stream.js';
import { ErrorMessage, formatDate, useAction, useLoad } from '../components/ui.js';

/** While the stream is down, the import's status is asked this often instead. */
const POLL_INTERVAL_MS = 2000;

interface Progress {
  importId: string;
  status: 'in_progress' | 'done';
  rows: number;
  accepted: number;
  created: number;
  duplicates: number;
  failed: number;
}

export function Import() {
  const [file, setFile] = useState<File | undefined>(undefined);
  const [progress, setProgress] = useState<Progress | undefined>(undefined);
  const [report, setReport] = useState<ImportReport | undefined>(undefined);
  const upload = useAction();
  const history = useLoad(
    async () => unwrap(await api.GET('/api/leads/imports', { params: { query: { limit: 10 } } })),
    [],
  );

  const importId = progress?.importId;
  const done = progress?.status === 'done';

  useStream((message) => {
    if (message.type !== 'lead.import_progress' || message.data.importId !== importId) return;
    setProgress(message.data as unknown as Progress);
  });

  // The per-row report (and a fallback for progress) from GET /api/leads/imports/<id>.
  useEffect(() => {
    if (!importId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = async () => {
      const result = await api.GET('/api/leads/imports/{importId}', { params: { path: { importId } } });
      if (stopped) return;
      if (result.data) {
        setReport(result.data);
        setProgress((current) => (current?.status === 'done' ? current : { ...result.data }));
        if (result.data.status === 'done') {
          void history.reload();
          return;
        }
      }
      timer = setTimeout(check, POLL_INTERVAL_MS);
    };
    void check();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [importId, done]);

  const processed = progress ? progress.created + progress.duplicates + progress.failed : 0;

  return (
    <section aria-labelledby="import-title">
      <h1 id="import-title">Import leads from CSV</h1>
      <p class="muted">
        A header row, then one lead per row. Recognised columns: email, firstName, lastName, phone, company;
        other columns become custom fields.
      </p>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          if (!file) return;
          void upload.run(async () => {
            setProgress(undefined);
            setReport(undefined);
            const body = new FormData();
            body.append('file', file, file.name);
            const response = await authorizedFetch(
              new Request('/api/leads/import', { method: 'POST', body }),
            );
            const answer = (await response.json().catch(() => ({}))) as Progress & {
              imported: number;
              error?: string;
            };
            if (!response.ok) throw new Error(answer.error ?? `Import failed (${response.status})`);
            setProgress({ ...answer, created: answer.imported });
          });
        }}
      >
        <label>
          CSV file
          <input
            type="file"
            name="file"
            accept=".csv,text/csv"
            onChange={(event) => setFile(event.currentTarget.files?.[0])}
          />
        </label>
        <button type="submit" class="primary" disabled={!file || upload.pending}>
          {upload.pending ? 'Uploading…' : 'Import'}
        </button>
      </form>
      <ErrorMessage error={upload.error} />
      {progress && (
        <section aria-labelledby="import-progress-title" class="import-progress">
          <h2 id="import-progress-title">{done ? 'Import finished' : 'Importing…'}</h2>
          <progress
            aria-labelledby="import-progress-title"
            max={Math.max(progress.rows, 1)}
            value={done ? Math.max(progress.rows, 1) : processed}
            data-status={progress.status}
          />
          <p role="status">
            {processed} of {progress.rows} rows processed: {progress.created} created, {progress.duplicates}{' '}
            duplicates, {progress.failed} failed.
          </p>
          {report && report.errors.length > 0 && (
            <table>
              <caption>Rows that were not imported</caption>
              <thead>
                <tr>
                  <th scope="col">Row</th>
                  <th scope="col">Problem</th>
                </tr>
              </thead>
              <tbody>
                {report.errors.map((error) => (
                  <tr key={`${error.row}-${error.error}`}>
                    <td class="number">{error.row}</td>
                    <td>{error.error}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
      <section aria-labelledby="import-history-title">
        <h2 id="import-history-title">Recent imports</h2>
        <ErrorMessage error={history.error} />
        <ul>
          {(history.data?.data ?? []).map((entry) => (
            <li key={entry.importId}>
              {formatDate(entry.createdAt)} — {entry.status === 'done' ? 'done' : 'in progress'}: {entry.rows}{' '}
              rows, {entry.created} created, {entry.duplicates} duplicates, {entry.failed} failed
            </li>
          ))}
        </ul>
      </section>
    </section>
  );
}
