import {
  LEAD_FIELDS,
  MAPPING_TARGETS,
  type MappingTarget,
  NAME_SPLIT_RULES,
  type NameSplitRule,
  SOURCE_FORMATS,
  type SourceFormat,
} from '@lead-capture/contracts/source-vocabulary';
import { useEffect, useState } from 'preact/hooks';
import { api, inPath, type Source, unwrap } from '../api/client.js';
import { useStream } from '../api/stream.js';
import { Options, TextField } from '../components/fields.js';
import { Form, InlineForm } from '../components/forms.js';
import { CardTable, PickList } from '../components/lists.js';
import { TitledSection } from '../components/sections.js';
import {
  ActionButton,
  CopyButton,
  ErrorMessage,
  formatDate,
  Status,
  useAction,
  useLoad,
  useReloadOnReturn,
} from '../components/ui.js';
import { updateQuery, useLocation } from '../router.js';

const SAMPLE_PAYLOAD =
  '{\n  "email": "ada@example.com",\n  "first_name": "Ada",\n  "company": "Analytical Engines"\n}';
const PREVIEW_DELAY_MS = 400;

export function Sources() {
  const { query } = useLocation();
  const sources = useLoad(async () => unwrap(await api.GET('/api/sources')), []);
  // Sources created or changed elsewhere (another user, another tab): asked again when the user comes
  // back to the page, and after the live stream reconnects (the stream carries lead events only).
  useReloadOnReturn(sources.reload);
  useStream((message) => {
    if (message.type === 'reset') void sources.reload();
  });
  const selectedId = query.get('source') ?? undefined;
  const selected = sources.data?.find((source) => source.id === selectedId);
  const [name, setName] = useState('');
  const create = useAction();

  const select = (id: string | undefined) => updateQuery({ source: id });

  return (
    <TitledSection id="sources-title" title="Sources">
      <InlineForm
        submitLabel="Create source"
        action={create}
        submitDisabled={!name.trim()}
        onSubmit={async () => {
          const created = unwrap(await api.POST('/api/sources', { body: { name: name.trim() } }));
          setName('');
          await sources.reload();
          select(created.id);
        }}
      >
        <TextField
          label="New source name"
          name="sourceName"
          required
          maxLength={255}
          value={name}
          onValue={setName}
        />
      </InlineForm>
      <ErrorMessage error={create.error ?? sources.error} />
      <div class="split">
        <PickList
          class="source-list"
          label="Sources"
          items={sources.data}
          idOf={(source) => source.id}
          nameOf={(source) => source.name}
          detailOf={(source) => <span class="muted"> · {formatDate(source.createdAt)}</span>}
          picked={selectedId}
          onPick={select}
          empty="No source yet: create one to get a webhook URL."
        />
        {selected && (
          <SourceDetail
            key={selected.id}
            source={selected}
            onChanged={() => void sources.reload()}
            onDeleted={() => {
              select(undefined);
              void sources.reload();
            }}
          />
        )}
      </div>
    </TitledSection>
  );
}

function SourceDetail(props: { source: Source; onChanged: () => void; onDeleted: () => void }) {
  const { source, onChanged } = props;
  const action = useAction();
  return (
    <article class="source-detail" aria-labelledby="source-name">
      <h2 id="source-name">{source.name}</h2>
      <TitledSection id="webhook-title" level={3} title="Webhook">
        <p>
          <label>
            Webhook URL
            <input type="text" readOnly value={source.webhookUrl ?? ''} class="mono" />
          </label>
        </p>
        <div class="actions">
          {source.webhookUrl && <CopyButton text={source.webhookUrl} label="Copy webhook URL" />}
          <ActionButton
            question="Regenerate the token? The current webhook URL stops working at once."
            action={action}
            onRun={async () =>
              unwrap(await api.POST('/api/sources/{id}/regenerate-token', inPath({ id: source.id })))
            }
            onDone={onChanged}
          >
            Regenerate token
          </ActionButton>
          <ActionButton
            class="danger"
            question={`Delete the source ${source.name}? Its leads are kept.`}
            action={action}
            onRun={async () => unwrap(await api.DELETE('/api/sources/{id}', inPath({ id: source.id })))}
            onDone={props.onDeleted}
          >
            Delete source
          </ActionButton>
        </div>
        <ErrorMessage error={action.error} />
      </TitledSection>
      <MappingEditor source={source} onSaved={onChanged} />
      <Submissions source={source} />
    </article>
  );
}

type MappingRow = { incoming: string; field: string };

/** What a target holds, where its name does not say it. */
const TARGET_HINTS: Partial<Record<MappingTarget, string>> = {
  fullName: 'split into first and last name',
  referrer: 'the referring page URL',
  landingPage: 'the page the form was on',
};

/**
 * The targets the API accepts (the contracts' list, so the editor never lags behind it), grouped:
 * the lead's fields, its UTM parameters and pages, the ad platforms' click ids.
 */
const TARGET_GROUPS: Array<{ label: string; targets: MappingTarget[] }> = (() => {
  const lead = MAPPING_TARGETS.filter(
    (target) => (LEAD_FIELDS as readonly string[]).includes(target) || target === 'fullName',
  );
  const attribution = MAPPING_TARGETS.filter(
    (target) => target.startsWith('utm_') || target === 'referrer' || target === 'landingPage',
  );
  const clickIds = MAPPING_TARGETS.filter(
    (target) => !lead.includes(target) && !attribution.includes(target),
  );
  return [
    { label: 'Lead', targets: lead },
    { label: 'Attribution', targets: attribution },
    { label: 'Ad click ids', targets: clickIds },
  ];
})();

function TargetOptions({ current }: { current: string }) {
  const known = (MAPPING_TARGETS as readonly string[]).includes(current);
  return (
    <>
      {!known && <option value={current}>{current || '—'}</option>}
      {TARGET_GROUPS.map((group) => (
        <optgroup key={group.label} label={group.label}>
          {group.targets.map((target) => (
            <option key={target} value={target}>
              {TARGET_HINTS[target] ? `${target} (${TARGET_HINTS[target]})` : target}
            </option>
          ))}
        </optgroup>
      ))}
    </>
  );
}

function MappingEditor({ source, onSaved }: { source: Source; onSaved: () => void }) {
  const [rows, setRows] = useState<MappingRow[]>(() =>
    Object.entries(source.fieldMappings ?? {}).map(([incoming, field]) => ({
      incoming,
      field: String(field),
    })),
  );
  const [format, setFormat] = useState<SourceFormat>(source.format);
  const [nameSplit, setNameSplit] = useState<NameSplitRule>(source.nameSplit);
  const [sample, setSample] = useState(SAMPLE_PAYLOAD);
  const save = useAction();
  const [preview, setPreview] = useState<{ result?: unknown; error?: string }>({});

  const mappings = Object.fromEntries(
    rows.filter((row) => row.incoming.trim() && row.field).map((row) => [row.incoming.trim(), row.field]),
  );
  const mappingsKey = JSON.stringify(mappings);
  const unsaved =
    mappingsKey !== JSON.stringify(source.fieldMappings ?? {}) ||
    format !== source.format ||
    nameSplit !== source.nameSplit;

  // Live preview: the sample through the mappings and format as they are on screen (saved or not),
  // with the webhook's own mapping code.
  useEffect(() => {
    const timer = setTimeout(async () => {
      let payload: unknown;
      try {
        payload = JSON.parse(sample);
      } catch (error) {
        setPreview({
          error: `The sample is not valid JSON: ${(error as Error).message}`,
        });
        return;
      }
      const result = await api.POST('/api/sources/{id}/preview', {
        params: { path: { id: source.id } },
        body: {
          payload,
          format,
          nameSplit,
          fieldMappings: JSON.parse(mappingsKey),
        },
      });
      if (result.data) setPreview({ result: result.data });
      else
        setPreview({
          error: (result.error as { error?: string } | undefined)?.error ?? 'Preview failed',
        });
    }, PREVIEW_DELAY_MS);
    return () => clearTimeout(timer);
  }, [sample, source.id, mappingsKey, format, nameSplit]);

  return (
    <TitledSection id="mapping-title" level={3} title="Field mappings">
      <p class="muted">
        Rename incoming fields to lead fields or attribution; anything unmapped is kept as custom data.
      </p>
      <Form
        onSubmit={() => {
          void save.run(async () => {
            unwrap(
              await api.PUT('/api/sources/{id}', {
                params: { path: { id: source.id } },
                // The schema leaves the entries open (a name -> one of MAPPING_TARGETS, checked in code).
                body: { fieldMappings: mappings as never, format, nameSplit },
              }),
            );
            onSaved();
          });
        }}
      >
        <label>
          Format{' '}
          <select value={format} onChange={(event) => setFormat(event.currentTarget.value as SourceFormat)}>
            <Options choices={SOURCE_FORMATS} />
          </select>
        </label>
        <p class="muted">
          The tool that posts to this webhook: its payload is read into named fields before the mappings apply
          (generic: the payload as it is).
        </p>
        <label>
          Full name split{' '}
          <select
            value={nameSplit}
            onChange={(event) => setNameSplit(event.currentTarget.value as NameSplitRule)}
          >
            <Options choices={NAME_SPLIT_RULES} />
          </select>
        </label>
        <p class="muted">
          How a full name becomes first and last name: first-word (Tomás / Herrera Vidal), last-word (Mary
          Jane / Watson), or as-is (the whole name as the first name).
        </p>
        <table class="mappings">
          <thead>
            <tr>
              <th scope="col">Incoming field</th>
              <th scope="col">Lead field</th>
              <th scope="col">
                <span class="visually-hidden">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row, index) => (
              <tr key={index}>
                <td>
                  <input
                    type="text"
                    aria-label={`Incoming field ${index + 1}`}
                    value={row.incoming}
                    onInput={(event) => {
                      const incoming = event.currentTarget.value;
                      setRows(rows.map((item, i) => (i === index ? { ...item, incoming } : item)));
                    }}
                  />
                </td>
                <td>
                  <select
                    aria-label={`Lead field for row ${index + 1}`}
                    value={row.field}
                    onChange={(event) => {
                      const field = event.currentTarget.value;
                      setRows(rows.map((item, i) => (i === index ? { ...item, field } : item)));
                    }}
                  >
                    <TargetOptions current={row.field} />
                  </select>
                </td>
                <td>
                  <button
                    type="button"
                    class="ghost"
                    aria-label={`Remove mapping ${index + 1}`}
                    onClick={() => setRows(rows.filter((_, i) => i !== index))}
                  >
                    ✕
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <div class="actions">
          <button type="button" onClick={() => setRows([...rows, { incoming: '', field: 'email' }])}>
            Add mapping
          </button>
          <button type="submit" class="primary" disabled={save.pending}>
            Save mappings
          </button>
        </div>
        <ErrorMessage error={save.error} />
      </Form>
      <div class="preview">
        <label>
          Sample payload (JSON)
          <textarea
            rows={8}
            class="mono"
            value={sample}
            onInput={(event) => setSample(event.currentTarget.value)}
          />
        </label>
        <figure>
          <figcaption>
            {unsaved ? 'Preview with the mappings above (not saved yet)' : 'Preview with the saved mappings'}
          </figcaption>
          {preview.error ? (
            <ErrorMessage error={preview.error} />
          ) : (
            <pre class="mono" aria-live="polite" data-testid="mapping-preview">
              {preview.result ? JSON.stringify(preview.result, null, 2) : '…'}
            </pre>
          )}
        </figure>
      </div>
    </TitledSection>
  );
}

function Submissions({ source }: { source: Source }) {
  const [page, setPage] = useState(1);
  const submissions = useLoad(
    async () =>
      unwrap(
        await api.GET('/api/sources/{sourceId}/submissions', {
          params: { path: { sourceId: source.id }, query: { page, limit: 20 } },
        }),
      ),
    [source.id, page],
  );
  const replay = useAction();
  const [replayed, setReplayed] = useState('');
  return (
    <TitledSection
      id="submissions-title"
      level={3}
      title="Submissions"
      actions={
        <button type="button" onClick={() => void submissions.reload()}>
          Refresh
        </button>
      }
    >
      <ErrorMessage error={submissions.error ?? replay.error} />
      <p class="visually-hidden" aria-live="polite">
        {replayed}
      </p>
      {submissions.loading && !submissions.data && <Status>Loading…</Status>}
      {submissions.data?.pagination.total === 0 && (
        <p class="empty-state" data-empty="submissions">
          Nothing received yet. Every request sent to the webhook URL above shows here, accepted or rejected,
          with its payload: point your form at it, or POST a JSON body such as{' '}
          <code>{'{"email": "jane@example.com", "firstName": "Jane"}'}</code> to it.
        </p>
      )}
      {submissions.data?.pagination.total !== 0 && (
        <CardTable columns={['Received', 'Outcome', 'Payload', { label: 'Replay', hidden: true }]}>
          {(submissions.data?.data ?? []).map((submission) => (
            <tr key={submission.id}>
              <td data-label="Received">{formatDate(submission.receivedAt)}</td>
              <td data-label="Outcome">
                {submission.outcome}
                {submission.error ? ` — ${submission.error}` : ''}
              </td>
              <td data-label="Payload" class="mono excerpt">
                {submission.payloadExcerpt ?? JSON.stringify(submission.payload)?.slice(0, 200)}
              </td>
              <td>
                <button
                  type="button"
                  disabled={replay.pending}
                  onClick={() =>
                    void replay.run(async () => {
                      const result = unwrap(
                        await api.POST('/api/sources/{sourceId}/submissions/{submissionId}/replay', {
                          params: {
                            path: {
                              sourceId: source.id,
                              submissionId: submission.id,
                            },
                          },
                        }),
                      );
                      setReplayed(`Replayed: ${result.outcome}`);
                      await submissions.reload();
                    })
                  }
                >
                  Replay
                </button>
              </td>
            </tr>
          ))}
        </CardTable>
      )}
      {submissions.data && submissions.data.pagination.pages > 1 && (
        <nav class="pagination" aria-label="Submission pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>
            page {page} of {submissions.data.pagination.pages}
          </span>
          <button
            type="button"
            disabled={page >= submissions.data.pagination.pages}
            onClick={() => setPage(page + 1)}
          >
            Next
          </button>
        </nav>
      )}
    </TitledSection>
  );
}
