import { api, unwrap } from '../api/client.js';
import { fieldProblems } from '../api/problems.js';
import { Options, SelectField, TextField, useFields } from '../components/fields.js';
import { InlineForm } from '../components/forms.js';
import { CardTable } from '../components/lists.js';
import { TitledSection } from '../components/sections.js';
import { ErrorMessage, formatDate, useAction, useLoad } from '../components/ui.js';

const ROLES = ['member', 'admin'] as const;
type Role = (typeof ROLES)[number];

export function Users() {
  const users = useLoad(async () => unwrap(await api.GET('/api/users')), []);
  const form = useFields({ name: '', email: '', password: '', role: 'member' as Role });
  const action = useAction();
  // The API's error about a field of the new user (a short password, an e-mail in use) is said under it.
  const problems = fieldProblems(action.error, { name: 'Name', email: 'E-mail', password: 'Password' });
  const problem = (field: keyof typeof problems.byField) => ({
    problem: problems.byField[field],
    problemId: `new-user-${field}-problem`,
  });
  const patch = (id: string, body: { active?: boolean; role?: Role }) =>
    action.run(async () => {
      unwrap(await api.PATCH('/api/users/{id}', { params: { path: { id } }, body }));
      await users.reload();
    });

  return (
    <TitledSection id="users-title" title="Users">
      <InlineForm
        submitLabel="Add user"
        action={action}
        onSubmit={async () => {
          unwrap(await api.POST('/api/users', { body: form.values }));
          form.reset();
          await users.reload();
        }}
      >
        <TextField label="Name" required {...form.field('name')} {...problem('name')} />
        <TextField label="E-mail" type="email" required {...form.field('email')} {...problem('email')} />
        <TextField
          label="Password"
          type="password"
          required
          autoComplete="new-password"
          {...form.field('password')}
          {...problem('password')}
        />
        <SelectField label="Role" choices={ROLES} {...form.field('role')} />
      </InlineForm>
      <ErrorMessage error={problems.rest ?? users.error} />
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
                <Options choices={ROLES} />
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
    </TitledSection>
  );
}
