import { badRequest, parseJsonBody, unsupportedMediaType } from '@lead-capture/kit';
import iconv from 'iconv-lite';

/** The `charset` parameter of a Content-Type, lower-cased; undefined when there is none. */
export function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1]?.toLowerCase();
}

function isUtf8Name(charset: string): boolean {
  return charset === 'utf-8' || charset === 'utf8';
}

/**
 * Labels read as Windows-1252, as browsers read them (WHATWG Encoding): a page that says ISO-8859-1
 * or ASCII sends Windows-1252 (0x80 is €), and iconv-lite's own `latin1` would not.
 */
const WINDOWS_1252_LABELS = new Set([
  'windows-1252',
  'cp1252',
  'x-cp1252',
  'iso-8859-1',
  'iso8859-1',
  'iso_8859-1',
  'latin1',
  'l1',
  'us-ascii',
  'ascii',
]);

/** A decoder for a charset a sender declares (iconv-lite, as the CSV import); an unknown one is a 415. */
function decoderFor(charset: string): (bytes: Buffer) => string {
  const encoding = WINDOWS_1252_LABELS.has(charset) ? 'windows-1252' : charset;
  if (!iconv.encodingExists(encoding)) {
    throw unsupportedMediaType(`Unsupported charset: ${charset.slice(0, 40)}; send UTF-8`);
  }
  return (bytes) => iconv.decode(bytes, encoding);
}

/**
 * A JSON body as text, in the charset its Content-Type declares (UTF-8 when none does). kit's
 * parseJsonBody ignores a byte order mark before it.
 */
export function jsonText(body: Buffer, contentType: string | undefined): string {
  const charset = charsetOf(contentType);
  return charset === undefined || isUtf8Name(charset) ? body.toString('utf8') : decoderFor(charset)(body);
}

/** A JSON object or array sent under another content type ("{...}" with its brackets). */
function looksLikeJson(text: string): boolean {
  const trimmed = text.trim();
  return (
    (trimmed.startsWith('{') && trimmed.endsWith('}')) || (trimmed.startsWith('[') && trimmed.endsWith(']'))
  );
}

/**
 * A `text/plain` body is taken when it holds JSON: `navigator.sendBeacon` with a string, and a
 * `fetch` in `no-cors` mode (how a static site posts to another origin without a preflight), both
 * send `text/plain;charset=UTF-8`. Any other text is a 415.
 */
export function parsePlainTextBody(body: Buffer, contentType: string | undefined, accepted: string): unknown {
  const text = jsonText(body, contentType);
  if (!looksLikeJson(text)) {
    throw unsupportedMediaType(
      `Unsupported Content-Type: ${String(contentType).slice(0, 100)}; send ${accepted}`,
    );
  }
  return parseJsonBody(text);
}

const HEX = /^[0-9a-fA-F]{2}$/;

/** The bytes a form-encoded name or value stands for: `+` a space, `%XX` a byte, any other byte itself. */
function formBytes(text: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x2b) bytes.push(0x20);
    else if (code === 0x25 && HEX.test(text.slice(index + 1, index + 3))) {
      bytes.push(Number.parseInt(text.slice(index + 1, index + 3), 16));
      index += 2;
    } else bytes.push(code);
  }
  return Buffer.from(bytes);
}

/**
 * An HTML form post (application/x-www-form-urlencoded) as a payload object: each field a string,
 * a repeated field (a checkbox group) an array of its values in order.
 *
 * Its bytes are read in the charset the Content-Type declares; browsers declare none and encode in
 * the page's charset, so a form that is not valid UTF-8 is read as Windows-1252 (a page in
 * ISO-8859-1 or Windows-1252 sends "Fran%E7ois"), rather than turning its accents into U+FFFD. A
 * body that is a JSON object is read as JSON: Google Apps Script's UrlFetchApp labels a payload
 * without a contentType as a form, whatever it holds.
 */
export function parseFormBody(body: Buffer, contentType?: string): unknown {
  // Form encoding is ASCII: latin1 keeps each byte as one character, so every byte can be recovered.
  const text = body.toString('latin1');
  if (looksLikeJson(text)) {
    try {
      return parseJsonBody(jsonText(body, contentType));
    } catch {
      // Not JSON after all: a form whose first field name starts with a brace.
    }
  }
  const pairs = text
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const equals = pair.indexOf('=');
      return equals < 0
        ? [formBytes(pair), Buffer.alloc(0)]
        : [formBytes(pair.slice(0, equals)), formBytes(pair.slice(equals + 1))];
    });
  const decode = formDecoder(pairs.flat(), charsetOf(contentType));
  const fields = new Map<string, string | string[]>();
  for (const [nameBytes, valueBytes] of pairs) {
    const name = decode(nameBytes!);
    const value = decode(valueBytes!);
    if (name === '__proto__') throw badRequest('Form data must not contain the field "__proto__"');
    const previous = fields.get(name);
    if (previous === undefined) fields.set(name, value);
    else if (Array.isArray(previous)) previous.push(value);
    else fields.set(name, [previous, value]);
  }
  // fromEntries defines own properties: no name can reach a prototype.
  return Object.fromEntries(fields);
}

/** The declared charset, else UTF-8 when every name and value is valid UTF-8, else Windows-1252. */
function formDecoder(parts: Buffer[], charset: string | undefined): (bytes: Buffer) => string {
  if (charset !== undefined && !isUtf8Name(charset)) return decoderFor(charset);
  const strict = new TextDecoder('utf-8', { fatal: true });
  const utf8 =
    charset !== undefined ||
    parts.every((bytes) => {
      try {
        strict.decode(bytes);
        return true;
      } catch {
        return false;
      }
    });
  return utf8 ? (bytes) => bytes.toString('utf8') : decoderFor('windows-1252');
}
