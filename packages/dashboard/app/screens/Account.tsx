import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client.js';
import { session } from '../api/session.js';
import { TextField } from '../components/fields.js';
import { Form } from '../components/forms.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, FieldList, useAction } from '../components/ui.js';

/** The signed-in user's own account: who they are, and their password. */
export function Account() {
  const user = session.user;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeated, setRepeated] = useState('');
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [done, setDone] = useState('');
  const action = useAction();
  if (!user) return null;
  return (
    <TitledSection id="account-title" title="Your account">
      <FieldList
        rows={[
          ['Name', user.name],
          ['E-mail', user.email],
          ['Role', user.role],
        ]}
      />
      <Form
        class="editor"
        aria-labelledby="password-title"
        onSubmit={() => {
          setDone('');
          const mismatch =
            next !== repeated ? 'The two new passwords differ: type the same one twice.' : undefined;
          const tooShort = next.length < 8 ? 'Choose a new password of at least 8 characters.' : undefined;
          setProblem(tooShort ?? mismatch);
          if (tooShort ?? mismatch) return;
          void action.run(async () => {
            unwrap(
              await api.PUT('/api/users/me/password', {
                body: { currentPassword: current, newPassword: next },
              }),
            );
            // The change signs the user out everywhere, this tab included: sign in again here.
            const tokens = unwrap(
              await api.POST('/api/auth/login', { body: { email: user.email, password: next } }),
            );
            session.setTokens(tokens);
            setCurrent('');
            setNext('');
            setRepeated('');
            setDone('Password changed. Other devices and tabs are signed out.');
          });
        }}
      >
        <h2 id="password-title">Change your password</h2>
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onValue={setCurrent}
        />
        <TextField
          label="New password (at least 8 characters)"
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          aria-invalid={problem ? true : undefined}
          value={next}
          onValue={setNext}
        />
        <TextField
          label="New password again"
          type="password"
          autoComplete="new-password"
          required
          problem={problem}
          problemId="password-problem"
          value={repeated}
          onValue={setRepeated}
        />
        <ErrorMessage error={action.error} />
        <p role="status">{done}</p>
        <button type="submit" class="primary" disabled={action.pending}>
          Change password
        </button>
      </Form>
    </TitledSection>
  );
}
