import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import { badRequest } from '@lead-capture/kit';
import { parse, parseString } from 'fast-csv';
import iconv from 'iconv-lite';

/** The delimiters told apart on their own; any other single character can be named explicitly. */
export const DETECTED_DELIMITERS = [',', ';', '\t'] as const;

/** A row longer than this (characters) stops the import: a quote left open swallows the rest of the file. */
export const MAX_ROW_CHARS = 1024 * 1024;

/** Columns a header row may have. */
export const MAX_COLUMNS = 1000;

/** Bytes read to recognise the encoding and the delimiter. */
const SAMPLE_BYTES = 64 * 1024;

/** How a file is written, as detected (or as the caller named it). */
export interface CsvDialect {
  /** iconv-lite's name: `utf-8`, `utf-16le`, `utf-16be`, `windows-1252`, `macintosh`, or one the caller named. */
  encoding: string;
  /** The file starts with a byte order mark. */
  bom: boolean;
  delimiter: string;
}

export interface DialectChoice {
  encoding?: string;
  delimiter?: string;
}

/** Byte signatures of files people upload by mistake, with what to do instead. */
const NOT_CSV: { magic: number[]; what: string }[] = [
  { magic: [0x50, 0x4b, 0x03, 0x04], what: 'an Excel workbook (.xlsx) or another zip archive' },
  { magic: [0xd0, 0xcf, 0x11, 0xe0], what: 'an Excel 97-2003 workbook (.xls)' },
  { magic: [0x25, 0x50, 0x44, 0x46], what: 'a PDF document' },
  { magic: [0x1f, 0x8b], what: 'a gzip archive' },
];

function startsWith(bytes: Buffer, magic: number[]): boolean {
  return magic.every((byte, index) => bytes[index] === byte);
}

async function readSample(path: string): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(SAMPLE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SAMPLE_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * UTF-16 without a byte order mark: text in the Latin range has a zero in every other byte. Any
 * other zero byte means the file is not text.
 */
function utf16WithoutBom(sample: Buffer): 'utf-16le' | 'utf-16be' | null {
  let evenZeros = 0;
  let oddZeros = 0;
  for (let index = 0; index < sample.length; index++) {
    if (sample[index] !== 0) continue;
    if (index % 2 === 0) evenZeros++;
    else oddZeros++;
  }
  const pairs = Math.floor(sample.length / 2);
  if (pairs === 0) return null;
  if (oddZeros > pairs * 0.3 && evenZeros < pairs * 0.05) return 'utf-16le';
  if (evenZeros > pairs * 0.3 && oddZeros < pairs * 0.05) return 'utf-16be';
  return null;
}

/** The whole file is valid UTF-8 (read in a stream, never held in memory). */
async function isUtf8(path: string): Promise<boolean> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of createReadStream(path)) decoder.decode(chunk as Buffer, { stream: true });
    decoder.decode();
    return true;
  } catch {
    return false;
  }
}

/** A control character that no text export holds (tab, line feed, form feed and carriage return aside). */
function isStrayControl(code: number): boolean {
  return (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d) || code === 0x7f;
}

function looksBinary(text: string): boolean {
  let controls = 0;
  for (let index = 0; index < text.length; index++) {
    if (isStrayControl(text.charCodeAt(index))) controls++;
  }
  return controls > Math.max(2, text.length / 1000);
}

function binaryFile(): never {
  throw badRequest('The file is not text; upload the leads as a CSV file');
}

async function detectEncoding(path: string, sample: Buffer): Promise<{ encoding: string; bom: boolean }> {
  if (startsWith(sample, [0xef, 0xbb, 0xbf])) return { encoding: 'utf-8', bom: true };
  if (startsWith(sample, [0xff, 0xfe])) return { encoding: 'utf-16le', bom: true };
  if (startsWith(sample, [0xfe, 0xff])) return { encoding: 'utf-16be', bom: true };
  const utf16 = utf16WithoutBom(sample);
  if (utf16) return { encoding: utf16, bom: false };
  if (sample.includes(0)) binaryFile();
  if (await isUtf8(path)) return { encoding: 'utf-8', bom: false };
  // Excel saves "Comma Separated Values" in the system's code page: on Windows, Windows-1252 in
  // western Europe and the Americas; on a Mac, Mac Roman, with lines ended by a lone CR, as classic
  // Mac OS did (no other tool writes such lines). A file that is not valid UTF-8 is read as one of them.
  return { encoding: crOnlyLines(sample) ? 'macintosh' : 'windows-1252', bom: false };
}

/** Lines ended by CR alone: a CR in the sample and never CR LF (a line break inside a cell is a LF). */
function crOnlyLines(sample: Buffer): boolean {
  const cr = sample.indexOf(0x0d);
  return cr >= 0 && !sample.includes('\r\n');
}

function hasBom(sample: Buffer, encoding: string): boolean {
  const normalized = encoding.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (normalized === 'utf8') return startsWith(sample, [0xef, 0xbb, 0xbf]);
  if (normalized === 'utf16le' || normalized === 'ucs2') return startsWith(sample, [0xff, 0xfe]);
  if (normalized === 'utf16be') return startsWith(sample, [0xfe, 0xff]);
  return false;
}

/** The first records of a text sample with one delimiter; what parsed before an error counts. */
async function sampleRecords(text: string, delimiter: string, complete: boolean): Promise<string[][]> {
  const rows: string[][] = [];
  await new Promise<void>((resolve) => {
    const stream = parseString(text, { headers: false, ignoreEmpty: true, delimiter, maxRows: 51 });
    stream.on('data', (row: string[]) => rows.push(row));
    stream.on('error', () => resolve());
    stream.on('end', () => resolve());
  });
  // The sample may end inside a record: its last one is not to be trusted.
  return complete ? rows : rows.slice(0, -1).length > 0 ? rows.slice(0, -1) : rows;
}

/**
 * The delimiter that splits the header into the most columns with the data rows agreeing with it
 * (footer and blank rows lower the agreement but not to zero). A single column reads as `,`.
 */
export async function detectDelimiter(text: string, complete: boolean): Promise<string> {
  let best: { delimiter: string; score: number } = { delimiter: ',', score: 0 };
  for (const delimiter of DETECTED_DELIMITERS) {
    const rows = await sampleRecords(text, delimiter, complete);
    const width = rows[0]?.length ?? 0;
    if (width < 2) continue;
    const data = rows.slice(1);
    const agreeing = data.filter((row) => row.length === width).length;
    const score = width * (data.length === 0 ? 1 : agreeing / data.length);
    if (score > best.score) best = { delimiter, score };
  }
  return best.delimiter;
}

/**
 * How the file is written: its encoding (a byte order mark, UTF-16 without one, else UTF-8 when the
 * whole file is valid UTF-8, else Mac Roman for lines ended by a lone CR, else Windows-1252) and its delimiter (`,` `;` or tab, from the first
 * rows), unless the caller named them. A binary file, a workbook or an archive is a 400.
 */
export async function detectDialect(path: string, choice: DialectChoice = {}): Promise<CsvDialect> {
  const sample = await readSample(path);
  const magic = NOT_CSV.find(({ magic }) => startsWith(sample, magic));
  if (magic) throw badRequest(`The file is ${magic.what}, not CSV; save it as CSV and upload that`);
  const { encoding, bom } = choice.encoding
    ? { encoding: choice.encoding, bom: hasBom(sample, choice.encoding) }
    : await detectEncoding(path, sample);
  const complete = sample.length < SAMPLE_BYTES;
  // An even number of bytes, so UTF-16 is not cut inside a character.
  const text = iconv.decode(complete ? sample : sample.subarray(0, sample.length & ~1), encoding);
  if (looksBinary(text)) binaryFile();
  const delimiter = choice.delimiter ?? (await detectDelimiter(text, complete));
  return { encoding, bom, delimiter };
}

/**
 * Cuts decoded text after the last complete row of each chunk, following quotes the way fast-csv
 * does (a quote opens a quoted field only at the start of a field). fast-csv re-reads an incomplete
 * row from its start at every chunk, which makes one long row quadratic: with whole rows only, each
 * row is read once. A row longer than `maxRowChars` (an unclosed quote, a file without line breaks)
 * is a 400 naming its line.
 */
export function rowChunker(delimiter: string, maxRowChars = MAX_ROW_CHARS): Transform {
  let carry = '';
  let inQuotes = false;
  let quoteInQuotes = false;
  let fieldStart = true;
  let rowChars = 0;
  let line = 1;
  let rowStartLine = 1;

  function scan(text: string): number {
    let lastBoundary = -1;
    for (let index = 0; index < text.length; index++) {
      const char = text[index]!;
      if (++rowChars > maxRowChars) {
        throw badRequest(
          `The row starting on line ${rowStartLine} is longer than ${maxRowChars} characters; is a quote (") left open?`,
        );
      }
      if (char === '\n') line++;
      if (inQuotes) {
        if (quoteInQuotes) {
          quoteInQuotes = false;
          if (char === '"') continue; // "" is a quote inside the field
          inQuotes = false;
        } else {
          if (char === '"') quoteInQuotes = true;
          continue;
        }
      }
      if (char === '\n' || char === '\r') {
        fieldStart = true;
        rowChars = 0;
        rowStartLine = line;
        lastBoundary = index;
      } else if (char === delimiter) {
        fieldStart = true;
      } else if (fieldStart && char === '"') {
        inQuotes = true;
        fieldStart = false;
      } else if (fieldStart && (char === ' ' || char === '\t')) {
        // fast-csv skips spaces before an opening quote
      } else {
        fieldStart = false;
      }
    }
    return lastBoundary;
  }

  return new Transform({
    readableObjectMode: false,
    decodeStrings: false,
    transform(chunk: string | Buffer, _encoding, callback: TransformCallback) {
      const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      try {
        const boundary = scan(text);
        if (boundary < 0) {
          carry += text;
          callback();
          return;
        }
        const whole = carry + text.slice(0, boundary + 1);
        carry = text.slice(boundary + 1);
        callback(null, whole);
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      callback(null, carry === '' ? undefined : carry);
    },
  });
}

/**
 * Bytes to text. Mac Roman through the WHATWG decoder: iconv-lite's table predates the euro sign,
 * which Mac OS (8.5 on) and Excel for Mac write as 0xDB.
 */
function decoder(encoding: string): NodeJS.ReadWriteStream {
  if (encoding !== 'macintosh') return iconv.decodeStream(encoding, { stripBOM: true });
  const text = new TextDecoder('macintosh');
  return new Transform({
    readableObjectMode: false,
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      callback(null, text.decode(chunk, { stream: true }));
    },
    flush(callback: TransformCallback) {
      callback(null, text.decode());
    },
  });
}

function parseError(error: unknown): Error {
  if (error instanceof Error && 'statusCode' in error) return error;
  const message = error instanceof Error ? error.message : String(error);
  // fast-csv quotes the rest of the row in its message; the kind of error is what helps.
  const reason = message.startsWith('Parse Error: missing closing')
    ? 'a quote (") is opened and never closed'
    : message.startsWith('Parse Error: expected')
      ? 'a quoted field is followed by text before the next delimiter'
      : message.replace(/^Parse Error: /, '').slice(0, 100);
  return badRequest(`The file is not valid CSV: ${reason}`);
}

/**
 * The file's records as arrays of cells, decoded and split with the dialect. The byte order mark is
 * dropped; nothing is held in memory beyond the row being read.
 */
export async function* readRecords(path: string, dialect: CsvDialect): AsyncGenerator<string[]> {
  const parser = parse({ headers: false, ignoreEmpty: false, delimiter: dialect.delimiter });
  let failure: unknown;
  // On an error in any stage pipeline destroys them all, the parser with that error.
  pipeline(
    createReadStream(path),
    decoder(dialect.encoding),
    rowChunker(dialect.delimiter),
    parser,
    (error) => {
      failure ??= error ?? undefined;
    },
  );
  try {
    for await (const record of parser) {
      if (!Array.isArray(record)) continue;
      yield record.map((cell) => (typeof cell === 'string' ? cell : String(cell ?? '')));
    }
  } catch (error) {
    throw parseError(failure ?? error);
  } finally {
    parser.destroy();
  }
}
