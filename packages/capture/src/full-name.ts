import { parseFullName } from 'parse-full-name';

export interface SplitName {
  firstName?: string;
  lastName?: string;
}

/** Suffixes that are part of the name itself (kept with the last name); credentials (PhD, MD, Esq.) are not. */
const GENERATIONAL_SUFFIX = /^(jr|sr|ii|iii|iv|v|vi)\.?$/i;

/**
 * Splits the one "Name" field many senders have into a first and a last name. Titles ("Dr.", "Mrs"),
 * nicknames and credentials are dropped; Jr./Sr./III stay with the last name; particles (van, de, von
 * der, da, ...) start the last name; middle names stay with the first name, as a form's first-name
 * field holds them. "Last, First" is read the other way round. One word is a first name, unless a
 * title says it is a surname ("Mr. Smith"). The case is kept as typed.
 */
export function splitFullName(fullName: string): SplitName {
  const name = fullName.replace(/[\s\p{C}]+/gu, ' ').trim();
  if (name === '') return {};
  const commas = name.split(',').length - 1;
  if (commas === 1) {
    const [before = '', after = ''] = name.split(',').map((part) => part.trim());
    // "First Last, PhD" carries a suffix after its comma; anything else is "Last, First".
    if (before !== '' && after !== '' && !isSuffix(after)) return lastCommaFirst(before, after);
  }
  return fromParts(parseFullName(name, 'all', 0, 0, 0));
}

function lastCommaFirst(last: string, given: string): SplitName {
  const parsed = parseFullName(given, 'all', 0, 0, 0);
  const firstName = join(parsed.first, parsed.middle, parsed.last) ?? join(parsed.nick);
  return compact({ firstName, lastName: last });
}

function fromParts(parsed: ReturnType<typeof parseFullName>): SplitName {
  const suffix = parsed.suffix
    .split(/,\s*/)
    .filter((part) => GENERATIONAL_SUFFIX.test(part))
    .join(' ');
  const given = join(parsed.first, parsed.middle);
  if (given === undefined && parsed.title === '') {
    // The parser calls a lone word a last name; on a form a lone word is what people call themselves.
    return compact({ firstName: join(parsed.last, suffix) ?? join(parsed.nick) });
  }
  return compact({ firstName: given, lastName: join(parsed.last, suffix) });
}

function isSuffix(text: string): boolean {
  const probe = parseFullName(`Probe ${text}`, 'all', 0, 0, 0);
  return probe.suffix !== '' && probe.first === '' && probe.last === 'Probe';
}

function join(...parts: string[]): string | undefined {
  const text = parts
    .filter((part) => part !== '')
    .join(' ')
    .trim();
  return text === '' ? undefined : text;
}

function compact(name: { firstName?: string | undefined; lastName?: string | undefined }): SplitName {
  const split: SplitName = {};
  if (name.firstName !== undefined) split.firstName = name.firstName;
  if (name.lastName !== undefined) split.lastName = name.lastName;
  return split;
}
