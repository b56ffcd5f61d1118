/**
 * Characters a name shown to people must not hold: C0 and C1 control characters (NUL, escape,
 * line breaks ...) and the bidirectional embedding, override and isolate marks (U+202A-U+202E,
 * U+2066-U+2069), which make a dashboard show text in another order than it is stored ("Trojan
 * Source" spoofing).
 */
const UNSHOWABLE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

/** Why `text` cannot be a displayed name, for a 400 naming `field`; null when it can. */
export function displayTextProblem(field: string, text: string): string | null {
  const match = UNSHOWABLE.exec(text);
  if (!match) return null;
  const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `${field} must not contain control or text-direction characters (U+${code})`;
}
