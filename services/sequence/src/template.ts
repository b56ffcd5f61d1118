/**
 * The placeholders a step's subject and body may use: `{{firstName}}`, and with a default for a
 * missing value, `{{firstName|there}}`. Spaces inside the braces are ignored.
 */
export const PLACEHOLDERS = ['firstName', 'lastName', 'email', 'company', 'phone'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

/** The lead's values; null, absent or blank counts as missing. */
export type TemplateValues = Partial<Record<Placeholder, string | null>>;

const TOKEN = /\{\{([^{}]*)\}\}/g;

function isPlaceholder(name: string): name is Placeholder {
  return (PLACEHOLDERS as readonly string[]).includes(name);
}

function parseToken(inner: string): { name: string; fallback: string } {
  const bar = inner.indexOf('|');
  if (bar === -1) return { name: inner.trim(), fallback: '' };
  return { name: inner.slice(0, bar).trim(), fallback: inner.slice(bar + 1).trim() };
}

/** Each `{{...}}` of the template that names no placeholder, as written. */
export function unknownPlaceholders(template: string): string[] {
  return [...template.matchAll(TOKEN)]
    .filter(([, inner]) => !isPlaceholder(parseToken(inner ?? '').name))
    .map(([token]) => token);
}

/** The template with each placeholder replaced by the lead's value, else its default, else nothing. */
export function renderTemplate(template: string, values: TemplateValues): string {
  return template.replace(TOKEN, (token, inner: string) => {
    const { name, fallback } = parseToken(inner);
    if (!isPlaceholder(name)) return token;
    const value = values[name]?.trim();
    return value ? value : fallback;
  });
}

/** A subject on one line: a value with a line break must not end the header. */
export function renderSubject(template: string, values: TemplateValues): string {
  return renderTemplate(template, values).replace(/\s*[\r\n]+\s*/g, ' ');
}
