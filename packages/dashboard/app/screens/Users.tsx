import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client.js';
import { Options, SelectField, TextField } from '../components/fields.js';
import { InlineForm } from '../components/forms.js';
import { CardTable } from '../components/lists.js';
import { ErrorMessage, formatDate, useAction, useLoad } from '../components/ui.js';

const ROLES = ['member', 'admin'] as const;
type Role = (typeof ROLES)[number];

export function Users() {
  const users = useLoad(async () => unwrap(await api.GET('/api/users')), []);
  const [form, setForm] = useState({
    name: '',
    email: '',
    password: '',
    role: 'member' as Role,
  });
  const action = useAction();
  const patch = (id: string, body: { active?: boolean; role?: Role }) =>
    action.run(async () => {
      unwrap(await api.PATCH('/api/users/{id}', { params: { path: { id } }, body }));
      await users.reload();
    });

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <InlineForm
        submitLabel="Add user"
        action={action}
        onSubmit={async () => {
          unwrap(await api.POST('/api/users', { body: form }));
          setForm({ name: '', email: '', password: '', role: 'member' });
          await users.reload();
        }}
      >
        <TextField
          label="Name"
          required
          value={form.name}
          onValue={(value) => setForm({ ...form, name: value })}
        />
        <TextField
          label="E-mail"
          type="email"
          required
          value={form.email}
          onValue={(value) => setForm({ ...form, email: value })}
        />
        <TextField
          label="Password"
          type="password"
          required
          autoComplete="new-password"
          value={form.password}
          onValue={(value) => setForm({ ...form, password: value })}
        />
        <SelectField
          label="Role"
          value={form.role}
          onValue={(value) => setForm({ ...form, role: value as Role })}
        >
          <Options choices={ROLES} />
        </SelectField>
      </InlineForm>
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
                onChange={(e) => void patch(user.id, { role: e.currentTarget.value as Role })}
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
