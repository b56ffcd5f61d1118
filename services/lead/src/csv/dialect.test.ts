import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parse, parseString } from 'fast-csv';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectDelimiter, detectDialect, readRecords, rowChunker } from './dialect.js';

let directory: string;
let files = 0;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'csv-dialect-'));
});
afterAll(async () => rm(directory, { recursive: true, force: true }));

async function file(content: Buffer | string): Promise<string> {
  const path = join(directory, `${++files}.csv`);
  await writeFile(path, content);
  return path;
}

async function records(path: string, choice = {}): Promise<string[][]> {
  const dialect = await detectDialect(path, choice);
  const rows: string[][] = [];
  for await (const row of readRecords(path, dialect)) rows.push(row);
  return rows;
}

const utf16le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')]);
const utf16be = (text: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]);

describe('detectDialect', () => {
  it('reads each encoding Excel and the ad platforms write', async () => {
    const text = 'Vorname;Nachname;Firma\r\nJürgen;Müller;Straße & Söhne €\r\n';
    const expected = [
      ['Vorname', 'Nachname', 'Firma'],
      ['Jürgen', 'Müller', 'Straße & Söhne €'],
    ];
    const cases: [Buffer, string, boolean][] = [
      [Buffer.from(text), 'utf-8', false],
      [Buffer.from(`\uFEFF${text}`), 'utf-8', true],
      [utf16le(text), 'utf-16le', true],
      [utf16be(text), 'utf-16be', true],
      [iconv.encode(text, 'utf-16le'), 'utf-16le', false],
      [iconv.encode(text, 'windows-1252'), 'windows-1252', false],
      // Excel for Mac's "Comma Separated Values": Mac Roman, each line ended by a lone CR. The euro is
      // 0xDB, which iconv-lite's older table (the test's encoder) has as the currency sign.
      [iconv.encode(text.replaceAll('\r\n', '\r').replace('€', '¤'), 'macintosh'), 'macintosh', false],
    ];
    for (const [bytes, encoding, bom] of cases) {
      const path = await file(bytes);
      expect(await detectDialect(path), encoding).toEqual({ encoding, bom, delimiter: ';' });
      expect(await records(path), encoding).toEqual(expected);
    }
  });

  it('reads a file with lone CR line ends as Mac Roman only when it is not UTF-8, whatever its cells hold', async () => {
    const text = 'First Name,Last Name,Notes\rJosé,Müller,"line one\nline two"\rZoë,Weiß,\r';
    const expected = [
      ['First Name', 'Last Name', 'Notes'],
      ['José', 'Müller', 'line one\nline two'],
      ['Zoë', 'Weiß', ''],
    ];
    const mac = await file(iconv.encode(text, 'macintosh'));
    expect(await detectDialect(mac)).toEqual({ encoding: 'macintosh', bom: false, delimiter: ',' });
    expect(await records(mac)).toEqual(expected);
    const utf8 = await file(Buffer.from(text));
    expect(await detectDialect(utf8)).toEqual({ encoding: 'utf-8', bom: false, delimiter: ',' });
    expect(await records(utf8)).toEqual(expected);
    // CR LF lines are Windows': Windows-1252.
    const windows = await file(iconv.encode(text.replaceAll('\r', '\r\n'), 'windows-1252'));
    expect((await detectDialect(windows)).encoding).toBe('windows-1252');
  });

  it('tells comma, semicolon and tab apart, quotes and footers notwithstanding', async () => {
    expect(await detectDelimiter('a,b,c\n1,2,3\n', true)).toBe(',');
    expect(await detectDelimiter('Name;Firma\n"Müller, Hans";"A, B"\n', true)).toBe(';');
    expect(await detectDelimiter('full_name\tcity\nAda, Countess\tLondon, UK\n', true)).toBe('\t');
    expect(
      await detectDelimiter('"First Name","Email"\n"Ada","a@x.test"\n\n"Grand Totals (1 records)"\n', true),
    ).toBe(',');
    expect(await detectDelimiter('email\na@x.test\n', true)).toBe(',');
    // A sample cut inside a quoted field still decides from the rows before it.
    expect(await detectDelimiter('a;b;c\n1;2;3\n4;"5\n', false)).toBe(';');
  });

  it('uses an encoding or delimiter the caller names', async () => {
    const path = await file(iconv.encode('email|name\na@x.test|Zoë\n', 'latin1'));
    expect(await detectDialect(path, { encoding: 'iso-8859-1', delimiter: '|' })).toEqual({
      encoding: 'iso-8859-1',
      bom: false,
      delimiter: '|',
    });
    expect(await records(path, { encoding: 'iso-8859-1', delimiter: '|' })).toEqual([
      ['email', 'name'],
      ['a@x.test', 'Zoë'],
    ]);
  });

  it('refuses workbooks, archives and binary files with a 400 saying what they are', async () => {
    const xlsx = await file(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x06, 0x00]));
    await expect(detectDialect(xlsx)).rejects.toMatchObject({
      statusCode: 400,
      message:
        'The file is an Excel workbook (.xlsx) or another zip archive, not CSV; save it as CSV and upload that',
    });
    const random = Buffer.alloc(4096);
    for (let index = 0; index < random.length; index++) random[index] = (index * 7919 + 13) % 256;
    await expect(detectDialect(await file(random))).rejects.toMatchObject({
      statusCode: 400,
      message: 'The file is not text; upload the leads as a CSV file',
    });
    const controls = Buffer.from(`email\n${'\u0001\u0002\u0003x'.repeat(50)}\n`);
    await expect(detectDialect(await file(controls))).rejects.toMatchObject({ statusCode: 400 });
  });
});

/** fast-csv's records of a text fed in chunks of the given sizes, through the chunker or not. */
async function parseChunked(text: string, sizes: number[], chunked: boolean): Promise<string[][]> {
  const pieces: string[] = [];
  for (let offset = 0, index = 0; offset < text.length; index++) {
    const size = sizes[index % sizes.length]!;
    pieces.push(text.slice(offset, offset + size));
    offset += size;
  }
  const source = Readable.from(pieces, { objectMode: false });
  const parser = parse({ headers: false, ignoreEmpty: false });
  const stream = chunked ? source.pipe(rowChunker(',')).pipe(parser) : source.pipe(parser);
  const rows: string[][] = [];
  for await (const row of stream) rows.push(row as string[]);
  return rows;
}

async function parseWhole(text: string): Promise<string[][]> {
  const rows: string[][] = [];
  await new Promise<void>((resolve, reject) => {
    parseString(text, { headers: false, ignoreEmpty: false })
      .on('data', (row: string[]) => rows.push(row))
      .on('error', reject)
      .on('end', () => resolve());
  });
  return rows;
}

describe('rowChunker', () => {
  it('changes nothing fast-csv reads, wherever the chunks are cut', async () => {
    const text = [
      'email,name,notes',
      'a@x.test,"Ada ""the Countess""","line one\r\nline two"',
      'b@x.test, "spaced quote",mid"quote',
      '',
      'c@x.test,"a,b",\r',
      'd@x.test,x,"",',
      'e@x.test,"trailing\n"',
    ].join('\n');
    const whole = await parseWhole(text);
    for (const sizes of [[1], [2, 3], [7], [5, 1, 11], [text.length]]) {
      expect(await parseChunked(text, sizes, true), sizes.join(',')).toEqual(whole);
    }
  });

  it('refuses a row longer than the limit, such as the rest of a file after an unclosed quote', async () => {
    const unclosed = `email,notes\na@x.test,"open\n${'b@x.test,fine\n'.repeat(200)}`;
    const chunker = rowChunker(',', 1000);
    const piped = Readable.from([unclosed]).pipe(chunker);
    await expect(async () => {
      for await (const _ of piped) {
        // drain
      }
    }).rejects.toThrow(
      'The row starting on line 2 is longer than 1000 characters; is a quote (") left open?',
    );
  });

  it('reads a file with one very long line once, not once per chunk', async () => {
    // 3 MB without a line break: refused at the row limit, before fast-csv is handed any of it.
    const path = await file(`email,${'x,'.repeat(1_500_000)}`);
    await expect(records(path)).rejects.toMatchObject({
      statusCode: 400,
      message: expect.stringContaining('is longer than 1048576 characters'),
    });
    // Many long rows under the limit are read in linear time: each row reaches fast-csv whole.
    const wide = `email,notes\n${`a@x.test,${'y'.repeat(200_000)}\n`.repeat(20)}`;
    const rows = await records(await file(wide));
    expect(rows).toHaveLength(21);
    expect(rows[20]![1]).toHaveLength(200_000);
  });

  it('turns an unclosed quote at the end into a 400 without quoting the data', async () => {
    const path = await file('email,name\na@x.test,"Ada\n');
    await expect(records(path)).rejects.toMatchObject({
      statusCode: 400,
      message: 'The file is not valid CSV: a quote (") is opened and never closed',
    });
  });
});
