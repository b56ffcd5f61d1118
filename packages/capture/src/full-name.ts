import { DEFAULT_NAME_SPLIT, type NameSplitRule } from '@lead-capture/contracts/source-vocabulary';
import { parseFullName } from 'parse-full-name';

export interface SplitName {
  firstName?: string;
  lastName?: string;
}

/** Suffixes that are part of the name itself (kept with the last name); credentials (PhD, MD, Esq.) are not. */
const GENERATIONAL_SUFFIX = /^(jr|sr|ii|iii|iv|v|vi)\.?$/i;

/**
 * Splits the one "Name" field many senders have into a first and a last name, by `rule`
 * (NAME_SPLIT_RULES; a source's `nameSplit`):
 * - `first-word` (default): the first word is the first name, every word after it the last name, so
 *   two surnames stay together ("Tomás Herrera Vidal" -> Tomás / Herrera Vidal) and so do particles
 *   ("Ludwig van Beethoven" -> Ludwig / van Beethoven); a middle name goes with the last name.
 * - `last-word`: the last word, with the particles before it (van, de la, von der, da, bin, ...), is
 *   the last name and the words before it the first name ("Mary Jane Watson" -> Mary Jane / Watson).
 * - `as-is`: the whole name as typed (spaces collapsed) is the first name; no last name.
 * Both splitting rules drop titles ("Dr.", "Mrs"), nicknames and credentials (PhD, MD, Esq.), keep
 * Jr./Sr./II/III with the last name, read "Last, First" the other way round, and take one word as a
 * first name unless a title says it is a surname ("Mr. Smith"). The case is kept as typed. The name
 * is at most a few hundred characters (the mapping caps it), so the parser's cost is bounded.
 */
export function splitFullName(fullName: string, rule: NameSplitRule = DEFAULT_NAME_SPLIT): SplitName {
  const name = fullName.replace(/[\s\p{C}]+/gu, ' ').trim();
  if (name === '') return {};
  if (rule === 'as-is') return { firstName: name };
  const commas = name.split(',').length - 1;
  if (commas === 1) {
    const [before = '', after = ''] = name.split(',').map((part) => part.trim());
    // "First Last, PhD" carries a suffix after its comma; anything else is "Last, First".
    if (before !== '' && after !== '' && !isSuffix(after)) return lastCommaFirst(before, after);
  }
  return fromParts(parseFullName(name, 'all', 0, 0, 0), rule);
}

function lastCommaFirst(last: string, given: string): SplitName {
  const parsed = parseFullName(given, 'all', 0, 0, 0);
  const firstName = join(parsed.first, parsed.middle, parsed.last) ?? join(parsed.nick);
  return compact({ firstName, lastName: last });
}

function fromParts(parsed: ReturnType<typeof parseFullName>, rule: 'first-word' | 'last-word'): SplitName {
  const suffix = parsed.suffix
    .split(/,\s*/)
    .filter((part) => GENERATIONAL_SUFFIX.test(part))
    .join(' ');
  const given = join(parsed.first, parsed.middle);
  if (given === undefined && parsed.title === '') {
    // The parser calls a lone word a last name; on a form a lone word is what people call themselves.
    return compact({ firstName: join(parsed.last, suffix) ?? join(parsed.nick) });
  }
  if (rule === 'first-word' && parsed.first !== '') {
    return compact({ firstName: parsed.first, lastName: join(parsed.middle, parsed.last, suffix) });
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
