import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client.js';
import { session } from '../api/session.js';
import { TextField } from '../components/fields.js';
import { Form } from '../components/forms.js';
import { ErrorMessage, useAction } from '../components/ui.js';

export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { pending, error, run } = useAction();

  return (
    <main class="sign-in">
      <Form
        aria-labelledby="sign-in-title"
        onSubmit={() => {
          void run(async () => {
            const tokens = unwrap(await api.POST('/api/auth/login', { body: { email, password } }));
            session.setTokens(tokens);
            session.setUser(unwrap(await api.GET('/api/auth/me')));
          });
        }}
      >
        <h1 id="sign-in-title">Lead Capture</h1>
        <TextField
          label="E-mail"
          type="email"
          name="email"
          autoComplete="username"
          required
          value={email}
          onValue={setEmail}
        />
        <TextField
          label="Password"
          type="password"
          name="password"
          autoComplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        <ErrorMessage error={error} />
        <button type="submit" class="primary" disabled={pending}>
          {pending ? 'Signing in…' : 'Sign in'}
        </button>
      </Form>
    </main>
  );
}
