import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, QUALIFICATIONS, unwrap } from '../api/client.js';
import { CheckField, CheckList, TextAreaField, TextField } from '../components/fields.js';
import { Form } from '../components/forms.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, Status, useAction, useLoad } from '../components/ui.js';

export function Settings() {
  return (
    <TitledSection id="settings-title" title="Settings">
      <NotificationSettings />
      <ScoringSettings />
    </TitledSection>
  );
}

/**
 * A settings form under its title: on submit, `check` says whether the fields can be sent (and shows
 * what is wrong), then `save` sends them and the form says `savedText`; after the fields, the API's
 * error in words, what was saved, and the submit button.
 */
function SettingsForm(props: {
  titleId: string;
  title: string;
  submitLabel: string;
  savedText: string;
  check: () => boolean;
  save: () => Promise<unknown>;
  children: ComponentChildren;
}) {
  const action = useAction();
  const [saved, setSaved] = useState('');
  return (
    <Form
      class="editor"
      aria-labelledby={props.titleId}
      onSubmit={() => {
        setSaved('');
        if (!props.check()) return;
        void action.run(async () => {
          await props.save();
          setSaved(props.savedText);
        });
      }}
    >
      <h2 id={props.titleId}>{props.title}</h2>
      {props.children}
      <ErrorMessage error={action.error && settingsErrorInWords(action.error)} />
      <p role="status">{saved}</p>
      <button type="submit" class="primary" disabled={action.pending}>
        {props.submitLabel}
      </button>
    </Form>
  );
}

function NotificationSettings() {
  const settings = useLoad(async () => unwrap(await api.GET('/api/settings/notifications')), []);
  const [recipients, setRecipients] = useState('');
  const [recipientsProblem, setRecipientsProblem] = useState<string | undefined>(undefined);
  useEffect(() => setRecipients(settings.data?.recipients.join('\n') ?? ''), [settings.data]);
  if (!settings.data) return <ErrorMessage error={settings.error} />;
  const data = settings.data;
  const recipientList = recipients
    .split(/[\s,;]+/)
    .map((item) => item.trim())
    .filter(Boolean);
  return (
    <SettingsForm
      titleId="notifications-title"
      title="Team notifications"
      submitLabel="Save notifications"
      savedText="Notification settings saved"
      check={() => {
        const problem = recipientsProblemOf(recipientList, data.enabled);
        setRecipientsProblem(problem);
        return !problem;
      }}
      save={async () => {
        const body = { ...data, recipients: recipientList };
        settings.setData(unwrap(await api.PUT('/api/settings/notifications', { body })));
      }}
    >
      <CheckField
        label="Send an e-mail to the team for new leads"
        checked={data.enabled}
        onChange={(checked) => settings.setData({ ...data, enabled: checked })}
      />
      <fieldset>
        <legend>For leads that are</legend>
        <CheckList
          choices={QUALIFICATIONS}
          selected={data.qualifications}
          onChange={(qualifications) => settings.setData({ ...data, qualifications })}
        />
      </fieldset>
      <TextAreaField
        label="Recipients (one e-mail per line)"
        rows={3}
        value={recipients}
        onValue={setRecipients}
        problem={recipientsProblem}
        problemId="recipients-problem"
      />
    </SettingsForm>
  );
}

function ScoringSettings() {
  const settings = useLoad(async () => unwrap(await api.GET('/api/settings/scoring')), []);
  const [showProblems, setShowProblems] = useState(false);
  if (!settings.data)
    return settings.error ? <ErrorMessage error={settings.error} /> : <Status>Loading…</Status>;
  const data = settings.data;
  const weights = data.weights as Record<string, number>;
  const problems = showProblems ? scoringProblems(data.thresholds, weights) : {};
  return (
    <SettingsForm
      titleId="scoring-title"
      title="Scoring"
      submitLabel="Save scoring"
      savedText="Scoring settings saved"
      check={() => {
        setShowProblems(true);
        return Object.keys(scoringProblems(data.thresholds, weights)).length === 0;
      }}
      save={async () => settings.setData(unwrap(await api.PUT('/api/settings/scoring', { body: data })))}
    >
      <fieldset>
        <legend>Qualification thresholds (score at least)</legend>
        {(['hot', 'warm'] as const).map((name) => (
          <TextField
            key={name}
            label={name === 'hot' ? 'Hot from score' : 'Warm from score'}
            type="number"
            min={1}
            max={100}
            problem={problems[name]}
            problemId={`threshold-${name}-problem`}
            value={String(data.thresholds[name])}
            onValue={(value) =>
              settings.setData({ ...data, thresholds: { ...data.thresholds, [name]: Number(value) } })
            }
          />
        ))}
      </fieldset>
      <fieldset>
        <legend>Points per signal</legend>
        <div class="grid">
          {Object.entries(weights).map(([name, value]) => (
            <TextField
              key={name}
              label={name.replace(/([A-Z])/g, ' $1').toLowerCase()}
              type="number"
              min={-100}
              max={100}
              problem={problems[name]}
              value={String(value)}
              onValue={(next) =>
                settings.setData({ ...data, weights: { ...data.weights, [name]: Number(next) } })
              }
            />
          ))}
        </div>
      </fieldset>
      {Object.keys(problems).length > 0 && (
        <p class="error" role="alert">
          Nothing was saved: correct the fields marked above.
        </p>
      )}
    </SettingsForm>
  );
}

const isWhole = (value: number, min: number, max: number) =>
  Number.isInteger(value) && value >= min && value <= max;

/** What is wrong with each field, in words, keyed by the field (`hot`, `warm` or a rule's name). */
export function scoringProblems(
  thresholds: { hot: number; warm: number },
  weights: Record<string, number>,
): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const name of ['hot', 'warm'] as const)
    if (!isWhole(thresholds[name], 1, 100)) problems[name] = 'Enter a whole number from 1 to 100.';
  if (!problems.hot && !problems.warm && thresholds.hot <= thresholds.warm)
    problems.hot = `A hot lead must score higher than a warm one: set this above ${thresholds.warm}, or lower the warm score.`;
  for (const [name, value] of Object.entries(weights))
    if (!isWhole(value, -100, 100)) problems[name] = 'Enter a whole number of points from -100 to 100.';
  return problems;
}

function recipientsProblemOf(recipients: string[], enabled: boolean): string | undefined {
  const wrong = recipients.filter((address) => !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address));
  if (wrong.length === 1) return `"${wrong[0]}" is not an e-mail address.`;
  if (wrong.length > 1)
    return `These are not e-mail addresses: ${wrong.map((item) => `"${item}"`).join(', ')}.`;
  if (recipients.length > 50) return `At most 50 recipients: remove ${recipients.length - 50}.`;
  if (enabled && recipients.length === 0) return 'Add at least one e-mail address to send notifications to.';
  return undefined;
}

/**
 * The API's validation wording (`thresholds.hot must be greater than thresholds.warm`, `body/weights/x
 * must be <= 100`) as a sentence; anything else as it came.
 */
function settingsErrorInWords(error: string): string {
  if (/thresholds\.hot must be greater/.test(error))
    return 'A hot lead must score higher than a warm one: raise the hot score or lower the warm score.';
  if (/recipients/.test(error) && /email|format/.test(error))
    return 'One of the recipients is not an e-mail address.';
  if (/must be (<=|>=|integer)/.test(error)) return 'Each number must be a whole number within its range.';
  return error;
}
