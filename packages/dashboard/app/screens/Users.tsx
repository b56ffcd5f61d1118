import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client.js';
import { CardTable } from '../components/lists.js';
import { ErrorMessage, formatDate, useAction, useLoad } from '../components/ui.js';

export function Users() {
  const users = useLoad(async () => unwrap(await api.GET('/api/users')), []);
  const [form, setForm] = useState({
    name: '',
    email: '',
    password: '',
    role: 'member' as 'member' | 'admin',
  });
  const action = useAction();
  const patch = (id: string, body: { active?: boolean; role?: 'admin' | 'member' }) =>
    action.run(async () => {
      unwrap(await api.PATCH('/api/users/{id}', { params: { path: { id } }, body }));
      await users.reload();
    });

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            unwrap(await api.POST('/api/users', { body: form }));
            setForm({ name: '', email: '', password: '', role: 'member' });
            await users.reload();
          });
        }}
      >
        <label>
          Name
          <input
            required
            value={form.name}
            onInput={(e) => setForm({ ...form, name: e.currentTarget.value })}
          />
        </label>
        <label>
          E-mail
          <input
            type="email"
            required
            value={form.email}
            onInput={(e) => setForm({ ...form, email: e.currentTarget.value })}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            required
            autoComplete="new-password"
            value={form.password}
            onInput={(e) => setForm({ ...form, password: e.currentTarget.value })}
          />
        </label>
        <label>
          Role
          <select
            value={form.role}
            onChange={(e) => setForm({ ...form, role: e.currentTarget.value as 'member' | 'admin' })}
          >
            <option value="member">member</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <button type="submit" class="primary" disabled={action.pending}>
          Add user
        </button>
      </form>
      <ErrorMessage error={action.error ?? users.error} />
      <CardTable columns={['Name', 'E-mail', 'Role', 'Active', 'Created']}>
        {(users.data ?? []).map((user) => (
          <tr key={user.id}>
            <td data-label="Name">{user.name}</td>
            <td data-label="E-mail">{user.email}</td>
            <td data-label="Role">
              <select
                aria-label={`Role of ${user.name}`}
                value={user.role}
                onChange={(e) => void patch(user.id, { role: e.currentTarget.value as 'admin' | 'member' })}
              >
                <option value="member">member</option>
                <option value="admin">admin</option>
              </select>
            </td>
            <td data-label="Active">
              <input
                type="checkbox"
                aria-label={`${user.name} active`}
                checked={user.active}
                onChange={(e) => {
                  const active = e.currentTarget.checked;
                  if (
                    !active &&
                    !confirm(
                      `Deactivate ${user.name}? They are signed out everywhere and cannot sign in until reactivated. Their leads stay assigned to them.`,
                    )
                  ) {
                    e.currentTarget.checked = true;
                    return;
                  }
                  void patch(user.id, { active });
                }}
              />
            </td>
            <td data-label="Created">{formatDate(user.createdAt)}</td>
          </tr>
        ))}
      </CardTable>
    </section>
  );
}
