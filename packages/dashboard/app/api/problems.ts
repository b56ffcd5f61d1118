/**
 * What a form calls a field in an API error: its words, or for a list field a function given the
 * item's index when the API names one (`alertEmails[1]`), none otherwise.
 */
export type FieldWords = string | ((index: number | undefined) => string);

/**
 * An API error said next to the field it is about. The API names the field in its message, by its
 * body name: "password must be at least 8 characters long", "expiresAt must be in the future",
 * "alertEmails[1] must be a valid email address", "A user with this email already exists". A
 * message that starts with the name has it replaced by the field's words ("Password must…", "The
 * expiry date must…"); one that names it elsewhere is kept as it is. A message about no field
 * stays the form's (`rest`).
 */
export function fieldProblems<F extends string>(
  error: string | undefined,
  fields: Record<F, FieldWords>,
): { byField: Partial<Record<F, string>>; rest: string | undefined } {
  if (!error) return { byField: {}, rest: undefined };
  const entries = Object.entries(fields) as Array<[F, FieldWords]>;
  for (const [field, words] of entries) {
    const named = new RegExp(`^${field}(?:\\[(\\d+)\\])? `, 'i').exec(error);
    if (!named) continue;
    const index = named[1] === undefined ? undefined : Number(named[1]);
    const said = typeof words === 'function' ? words(index) : words;
    return {
      byField: { [field]: `${said} ${error.slice(named[0].length)}` } as Partial<Record<F, string>>,
      rest: undefined,
    };
  }
  for (const [field] of entries) {
    if (new RegExp(`\\b${field}\\b`, 'i').test(error))
      return { byField: { [field]: error } as Partial<Record<F, string>>, rest: undefined };
  }
  return { byField: {}, rest: error };
}
