import { useState } from 'preact/hooks';
import { api, inPath, unwrap } from '../api/client.js';
import { fieldProblems } from '../api/problems.js';
import { SelectField, TextField } from '../components/fields.js';
import { InlineForm, ShownOnce } from '../components/forms.js';
import { CardTable } from '../components/lists.js';
import { TitledSection } from '../components/sections.js';
import { ActionButton, ErrorMessage, formatDate, useAction, useLoad } from '../components/ui.js';

const SCOPES = ['read', 'full'] as const;
type Scope = (typeof SCOPES)[number];

export function ApiKeys() {
  const keys = useLoad(async () => unwrap(await api.GET('/api/api-keys')), []);
  const [label, setLabel] = useState('');
  const [scope, setScope] = useState<Scope>('read');
  const [expiresOn, setExpiresOn] = useState('');
  const [created, setCreated] = useState<string | undefined>(undefined);
  const action = useAction();
  // The API's error about the label or the expiry date is said under that field.
  const problems = fieldProblems(action.error, { label: 'The label', expiresAt: 'The expiry date' });
  const generate = async () => {
    const key = unwrap(
      await api.POST('/api/api-keys', {
        body: {
          label: label.trim(),
          scope,
          ...(expiresOn
            ? {
                expiresAt: new Date(`${expiresOn}T23:59:59`).toISOString(),
              }
            : {}),
        },
      }),
    );
    setCreated(key.key);
    setLabel('');
    await keys.reload();
  };

  return (
    <TitledSection id="keys-title" title="API keys">
      <InlineForm submitLabel="Generate key" action={action} onSubmit={generate}>
        <TextField
          label="Label"
          required
          maxLength={100}
          value={label}
          onValue={setLabel}
          problem={problems.byField.label}
          problemId="new-key-label-problem"
        />
        <SelectField
          label="Scope"
          choices={SCOPES}
          value={scope}
          onValue={(value) => setScope(value as Scope)}
        />
        <TextField
          label="Expires (optional)"
          type="date"
          value={expiresOn}
          onValue={setExpiresOn}
          problem={problems.byField.expiresAt}
          problemId="new-key-expires-problem"
        />
      </InlineForm>
      {created && (
        <ShownOnce
          note="The new key, shown this once only: copy it now."
          value={created}
          valueLabel="New API key"
          copyLabel="Copy key"
          onDone={() => setCreated(undefined)}
        />
      )}
      <ErrorMessage error={problems.rest ?? keys.error} />
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
                <ActionButton
                  class="danger"
                  label={`Delete the key ${key.label}`}
                  question={`Delete the key ${key.label} permanently?`}
                  action={action}
                  onRun={async () => unwrap(await api.DELETE('/api/api-keys/{id}', inPath({ id: key.id })))}
                  onDone={keys.reload}
                >
                  Delete
                </ActionButton>
              </td>
            </tr>
          ))}
        </CardTable>
      )}
    </TitledSection>
  );
}
