import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client.js';
import { session } from '../api/session.js';
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
    <section aria-labelledby="account-title">
      <h1 id="account-title">Your account</h1>
      <FieldList
        rows={[
          ['Name', user.name],
          ['E-mail', user.email],
          ['Role', user.role],
        ]}
      />
      <form
        class="editor"
        aria-labelledby="password-title"
        onSubmit={(event) => {
          event.preventDefault();
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
        <label>
          Current password
          <input
            type="password"
            autoComplete="current-password"
            required
            value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)}
          />
        </label>
        <label>
          New password (at least 8 characters)
          <input
            type="password"
            autoComplete="new-password"
            required
            minLength={8}
            value={next}
            aria-invalid={problem ? true : undefined}
            onInput={(e) => setNext(e.currentTarget.value)}
          />
        </label>
        <label>
          New password again
          <input
            type="password"
            autoComplete="new-password"
            required
            value={repeated}
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? 'password-problem' : undefined}
            onInput={(e) => setRepeated(e.currentTarget.value)}
          />
          {problem && (
            <span id="password-problem" class="field-error">
              {problem}
            </span>
          )}
        </label>
        <ErrorMessage error={action.error} />
        <p role="status">{done}</p>
        <button type="submit" class="primary" disabled={action.pending}>
          Change password
        </button>
      </form>
    </section>
  );
}
