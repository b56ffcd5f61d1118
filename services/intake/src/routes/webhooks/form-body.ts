import { badRequest } from '@lead-capture/kit';

/**
 * An HTML form post (application/x-www-form-urlencoded) as a payload object: each field a string,
 * a repeated field (a checkbox group) an array of its values in order.
 */
export function parseFormBody(body: string): Record<string, string | string[]> {
  const fields = new Map<string, string | string[]>();
  for (const [name, value] of new URLSearchParams(body)) {
    if (name === '__proto__') throw badRequest('Form data must not contain the field "__proto__"');
    const previous = fields.get(name);
    if (previous === undefined) fields.set(name, value);
    else if (Array.isArray(previous)) previous.push(value);
    else fields.set(name, [previous, value]);
  }
  // fromEntries defines own properties: no name can reach a prototype.
  return Object.fromEntries(fields);
}
