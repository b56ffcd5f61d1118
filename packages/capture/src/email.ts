/**
 * What a mail library's address parser (nodemailer's among them) reads as something other than one
 * plain mailbox: list separators (`,` `;`), a display name or a second address in brackets (`<` `>`),
 * quoted strings, comments (`(` `)`), groups (`:`), domain literals (`[` `]`) and escapes (`\`).
 */
const MAILBOX_SYNTAX = /[,;<>"()[\]\\:]/;
/** Any white space (U+2028 and NBSP included: parsers split on them) and any control or format character. */
const SPACE_OR_CONTROL = /[\s\p{C}]/u;

/**
 * Why an e-mail field (already trimmed) cannot be a lead's e-mail, or undefined when it can. A lead's
 * e-mail is at most one mailbox: anything a mail transport could read as a list, a display name or
 * several addresses is refused, so a public form can never turn our mail into a relay. A single
 * address that merely looks wrong (`jane@`, `jane(at)acme`) is not judged here: it is still a lead,
 * and enrichment reports it as invalid (the mail transport never sends to it).
 */
export function emailFieldProblem(value: string): string | undefined {
  if (SPACE_OR_CONTROL.test(value)) {
    return 'must be a single e-mail address, without spaces or control characters';
  }
  if (MAILBOX_SYNTAX.test(value)) {
    return 'must be a single e-mail address, without a name, brackets, quotes, commas or semicolons';
  }
  if (value.indexOf('@') !== value.lastIndexOf('@')) {
    return 'must be a single e-mail address (it holds more than one @)';
  }
  return undefined;
}
