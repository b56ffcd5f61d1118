import { useEffect, useState } from 'preact/hooks';
import { api, QUALIFICATIONS, unwrap } from '../api/client.js';
import { ErrorMessage, Status, useAction, useLoad } from '../components/ui.js';

export function Settings() {
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <NotificationSettings />
      <ScoringSettings />
    </section>
  );
}

function NotificationSettings() {
  const settings = useLoad(async () => unwrap(await api.GET('/api/settings/notifications')), []);
  const [recipients, setRecipients] = useState('');
  const action = useAction();
  const [saved, setSaved] = useState('');
  useEffect(() => setRecipients(settings.data?.recipients.join('\n') ?? ''), [settings.data]);
  if (!settings.data) return <ErrorMessage error={settings.error} />;
  const data = settings.data;
  return (
    <form
      class="editor"
      aria-labelledby="notifications-title"
      onSubmit={(event) => {
        event.preventDefault();
        const body = {
          ...data,
          recipients: recipients
            .split(/[\s,;]+/)
            .map((item) => item.trim())
            .filter(Boolean),
        };
        void action.run(async () => {
          settings.setData(unwrap(await api.PUT('/api/settings/notifications', { body })));
          setSaved('Notification settings saved');
        });
      }}
    >
      <h2 id="notifications-title">Team notifications</h2>
      <label class="check">
        <input
          type="checkbox"
          checked={data.enabled}
          onChange={(e) => settings.setData({ ...data, enabled: e.currentTarget.checked })}
        />
        Send an e-mail to the team for new leads
      </label>
      <fieldset>
        <legend>For leads that are</legend>
        {QUALIFICATIONS.map((value) => (
          <label class="check" key={value}>
            <input
              type="checkbox"
              checked={data.qualifications.includes(value)}
              onChange={(e) =>
                settings.setData({
                  ...data,
                  qualifications: e.currentTarget.checked
                    ? [...data.qualifications, value]
                    : data.qualifications.filter((item) => item !== value),
                })
              }
            />
            {value}
          </label>
        ))}
      </fieldset>
      <label>
        Recipients (one e-mail per line)
        <textarea rows={3} value={recipients} onInput={(e) => setRecipients(e.currentTarget.value)} />
      </label>
      <ErrorMessage error={action.error} />
      <p role="status">{saved}</p>
      <button type="submit" class="primary" disabled={action.pending}>
        Save notifications
      </button>
    </form>
  );
}

function ScoringSettings() {
  const settings = useLoad(async () => unwrap(await api.GET('/api/settings/scoring')), []);
  const action = useAction();
  const [saved, setSaved] = useState('');
  if (!settings.data)
    return settings.error ? <ErrorMessage error={settings.error} /> : <Status>Loading…</Status>;
  const data = settings.data;
  const weights = data.weights as Record<string, number>;
  return (
    <form
      class="editor"
      aria-labelledby="scoring-title"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          settings.setData(unwrap(await api.PUT('/api/settings/scoring', { body: data })));
          setSaved('Scoring settings saved');
        });
      }}
    >
      <h2 id="scoring-title">Scoring</h2>
      <fieldset>
        <legend>Qualification thresholds (score at least)</legend>
        {(['hot', 'warm'] as const).map((name) => (
          <label key={name}>
            {name}
            <input
              type="number"
              min={1}
              max={100}
              value={data.thresholds[name]}
              onInput={(e) =>
                settings.setData({
                  ...data,
                  thresholds: { ...data.thresholds, [name]: Number(e.currentTarget.value) },
                })
              }
            />
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Points per signal</legend>
        <div class="grid">
          {Object.entries(weights).map(([name, value]) => (
            <label key={name}>
              {name.replace(/([A-Z])/g, ' $1').toLowerCase()}
              <input
                type="number"
                min={-100}
                max={100}
                value={value}
                onInput={(e) =>
                  settings.setData({
                    ...data,
                    weights: { ...data.weights, [name]: Number(e.currentTarget.value) },
                  })
                }
              />
            </label>
          ))}
        </div>
      </fieldset>
      <ErrorMessage error={action.error} />
      <p role="status">{saved}</p>
      <button type="submit" class="primary" disabled={action.pending}>
        Save scoring
      </button>
    </form>
  );
}
