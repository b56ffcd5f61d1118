/**
 * An API error said next to the field it is about. The API names the field in its message, by its
 * body name: "password must be at least 8 characters long", "expiresAt must be in the future", "A
 * user with this email already exists". A message that starts with the name has it replaced by the
 * field's words ("Password must…", "The expiry date must…"); one that names it elsewhere is kept
 * as it is. A message about no field stays the form's (`rest`).
 */
export function fieldProblems<F extends string>(
  error: string | undefined,
  fields: Record<F, string>,
): { byField: Partial<Record<F, string>>; rest: string | undefined } {
  if (!error) return { byField: {}, rest: undefined };
  const lower = error.toLowerCase();
  for (const [field, words] of Object.entries(fields) as Array<[F, string]>) {
    const name = field.toLowerCase();
    if (lower.startsWith(`${name} `)) {
      return {
        byField: { [field]: `${words}${error.slice(field.length)}` } as Partial<Record<F, string>>,
        rest: undefined,
      };
    }
  }
  for (const field of Object.keys(fields) as F[]) {
    if (new RegExp(`\\b${field}\\b`, 'i').test(error))
      return { byField: { [field]: error } as Partial<Record<F, string>>, rest: undefined };
  }
  return { byField: {}, rest: error };
}
