import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client.js';
import { CardTable } from '../components/lists.js';
import { ConfirmButton, CopyButton, ErrorMessage, formatDate, useAction, useLoad } from '../components/ui.js';

export function ApiKeys() {
  const keys = useLoad(async () => unwrap(await api.GET('/api/api-keys')), []);
  const [label, setLabel] = useState('');
  const [scope, setScope] = useState<'read' | 'full'>('read');
  const [expiresOn, setExpiresOn] = useState('');
  const [created, setCreated] = useState<string | undefined>(undefined);
  const action = useAction();

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            const key = unwrap(
              await api.POST('/api/api-keys', {
                body: {
                  label: label.trim(),
                  scope,
                  ...(expiresOn ? { expiresAt: new Date(`${expiresOn}T23:59:59`).toISOString() } : {}),
                },
              }),
            );
            setCreated(key.key);
            setLabel('');
            await keys.reload();
          });
        }}
      >
        <label>
          Label
          <input
            type="text"
            required
            maxLength={100}
            value={label}
            onInput={(e) => setLabel(e.currentTarget.value)}
          />
        </label>
        <label>
          Scope
          <select value={scope} onChange={(e) => setScope(e.currentTarget.value as 'read' | 'full')}>
            <option value="read">read</option>
            <option value="full">full</option>
          </select>
        </label>
        <label>
          Expires (optional)
          <input type="date" value={expiresOn} onInput={(e) => setExpiresOn(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={action.pending}>
          Generate key
        </button>
      </form>
      {created && (
        <div class="notice" role="alert">
          <p>The new key, shown this once only: copy it now.</p>
          <input type="text" readOnly class="mono" value={created} aria-label="New API key" />
          <CopyButton text={created} label="Copy key" />
          <button type="button" class="ghost" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      )}
      <ErrorMessage error={action.error ?? keys.error} />
      {keys.data?.length === 0 ? (
        <div class="empty-state" data-empty="api-keys">
          <p>
            <strong>No API key yet.</strong> A key lets another program (your website's back end, a script, a
            CRM sync) use the API without a user's password: send it as <code>X-API-Key</code>. Create one
            above; it is shown once.
          </p>
        </div>
      ) : (
        <CardTable
          columns={[
            'Label',
            'Key',
            'Scope',
            'Expires',
            'Last used',
            'Active',
            { label: 'Delete', hidden: true },
          ]}
        >
          {(keys.data ?? []).map((key) => (
            <tr key={key.id}>
              <td data-label="Label">{key.label}</td>
              <td data-label="Key" class="mono">
                {key.prefix}…
              </td>
              <td data-label="Scope">{key.scope}</td>
              <td data-label="Expires">{formatDate(key.expiresAt)}</td>
              <td data-label="Last used">{formatDate(key.lastUsedAt)}</td>
              <td data-label="Active">
                <input
                  type="checkbox"
                  checked={key.active}
                  aria-label={`${key.label} active`}
                  onChange={(event) => {
                    const active = event.currentTarget.checked;
                    void action.run(async () => {
                      unwrap(
                        await api.PATCH('/api/api-keys/{id}', {
                          params: { path: { id: key.id } },
                          body: { active },
                        }),
                      );
                      await keys.reload();
                    });
                  }}
                />
              </td>
              <td>
                <ConfirmButton
                  danger
                  question={`Delete the key ${key.label} permanently?`}
                  action={action}
                  onConfirm={async () => {
                    unwrap(await api.DELETE('/api/api-keys/{id}', { params: { path: { id: key.id } } }));
                    await keys.reload();
                  }}
                >
                  Delete
                </ConfirmButton>
              </td>
            </tr>
          ))}
        </CardTable>
      )}
    </section>
  );
}
