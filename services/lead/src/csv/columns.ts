import {
  emailFieldProblem,
  FIELD_MAX_LENGTH,
  type FittedCustomData,
  fitCustomData,
  PAYLOAD_LIMITS,
  splitFullName,
} from '@lead-capture/capture';
import { type JsonObject, LEAD_FIELDS, type LeadField } from '@lead-capture/contracts';
import { badRequest } from '@lead-capture/kit';
import { MAX_COLUMNS } from './dialect.js';

/** What a column can be mapped to: a standard field, a full name to split, custom metadata, nothing. */
export const COLUMN_TARGETS = [...LEAD_FIELDS, 'fullName', 'custom', 'ignore'] as const;
export type ColumnTarget = (typeof COLUMN_TARGETS)[number];
type AliasTarget = LeadField | 'fullName';

/**
 * Header names recognised for each standard field and for a full name, compared without case,
 * accents, spaces or punctuation ("First Name", "first_name", "FIRSTNAME" and "first-name" are all
 * firstName). Each list is in order of preference: when a file has several columns for one field
 * (Salesforce "Phone" and "Mobile", Pipedrive's work, home and other e-mails), a row takes the first
 * of them that is not empty and keeps the others as custom fields. Two columns of the same rank for
 * one field are ambiguous (a 400: map them explicitly).
 *
 * The names are the column headers of these exports:
 * - HubSpot contacts export: "Record ID", "First Name", "Last Name", "Email", "Phone Number",
 *   "Mobile Phone Number", "Company Name", "Associated Company", "Contact owner", "Lead Status"
 *   (knowledge.hubspot.com, "Export your records"; the same headers in public scripts that read it).
 * - Salesforce lead and contact reports: "First Name", "Last Name", "Title", "Company / Account",
 *   "Email", "Phone", "Mobile", "Lead Source" (help.salesforce.com, "Export a Report").
 * - Pipedrive people export: "Person - Name", "Person - First name", "Person - Last name",
 *   "Person - Organization", "Person - Email - Work|Home|Other", "Person - Phone - Work|Home|Mobile|Other"
 *   (support.pipedrive.com, "Exporting data from Pipedrive").
 * - Zoho CRM leads export: "Record Id", "Lead Owner", "Company", "First Name", "Last Name",
 *   "Email", "Secondary Email", "Phone", "Mobile", "Lead Source", "Lead Status"
 *   (zoho.com/crm/help, "Export data"; the Leads module's standard fields).
 * - Mailchimp audience export: "Email Address", "First Name", "Last Name", "Address", "Phone Number",
 *   "MEMBER_RATING", "OPTIN_TIME", ..., "LEID", "EUID", "NOTES", "TAGS" (mailchimp.com/help,
 *   "View or export an audience"; the Export API 1.0 list export has the same header).
 * - Meta (Facebook / Instagram) lead export: a TSV (developers.facebook.com/docs/marketing-api/guides/
 *   lead-ads/retrieving, "TSV Download") with "id", "created_time", "ad_id", ..., "form_name",
 *   "is_organic", "platform" and then the form's fields by their keys: "full_name", "first_name",
 *   "last_name", "email", "work_email", "phone_number", "company_name", "job_title", "city" ...;
 *   values carry type prefixes such as "p:+447700900123" for a phone.
 * - LinkedIn lead gen form export: "First Name", "Last Name", "Email Address", "Phone Number",
 *   "Company Name", "Job Title", "Country" (the form's predefined fields FIRST_NAME, LAST_NAME,
 *   EMAIL, PHONE_NUMBER, COMPANY_NAME, JOB_TITLE: learn.microsoft.com/linkedin/marketing/lead-sync).
 * - Google Contacts export: "First Name" / "Given Name", "Last Name" / "Family Name", "E-mail 1 - Value",
 *   "Phone 1 - Value", "Organization Name" / "Organization 1 - Name" (the further e-mails and phones
 *   stay custom fields).
 * - Spreadsheets in the languages of the European locales whose Excel writes `;` files: German
 *   ("Vorname", "Nachname", "E-Mail", "Telefon", "Firma"), French ("Prénom", "Nom", "Courriel",
 *   "Téléphone", "Portable", "Société"), Spanish ("Nombre", "Apellidos", "Correo electrónico",
 *   "Teléfono", "Móvil", "Empresa"), Italian ("Nome", "Cognome", "Telefono", "Cellulare",
 *   "Azienda"), Dutch ("Voornaam", "Achternaam", "E-mailadres", "Telefoonnummer", "Bedrijf") and
 *   Portuguese ("Nome", "Sobrenome", "Telefone", "Celular", "Empresa").
 */
const HEADER_ALIASES: Record<AliasTarget, readonly (readonly string[])[]> = {
  email: [
    [
      'email',
      'emailaddress',
      'mail',
      'personemail',
      'emailadresse',
      'email1value',
      'courriel',
      'adresseemail',
      'adressemail',
      'correo',
      'correoelectronico',
      'indirizzoemail',
      'emailadres',
      'enderecodeemail',
    ],
    ['workemail', 'businessemail', 'personemailwork'],
    ['personemailhome', 'homeemail', 'personalemail'],
    ['personemailother', 'otheremail', 'secondaryemail'],
  ],
  firstName: [
    [
      'firstname',
      'first',
      'givenname',
      'forename',
      'fname',
      'personfirstname',
      'vorname',
      'prenom',
      'nombre',
      'nome',
      'voornaam',
    ],
  ],
  lastName: [
    [
      'lastname',
      'last',
      'surname',
      'familyname',
      'lname',
      'personlastname',
      'nachname',
      'nom',
      'nomdefamille',
      'apellido',
      'apellidos',
      'cognome',
      'achternaam',
      'sobrenome',
    ],
  ],
  fullName: [['fullname', 'name', 'contactname', 'personname', 'leadname']],
  phone: [
    [
      'phone',
      'phonenumber',
      'telephone',
      'telephonenumber',
      'personphone',
      'telefon',
      'telefonnummer',
      'phone1value',
      'telefono',
      'telefone',
      'telefoon',
      'telefoonnummer',
    ],
    ['workphone', 'workphonenumber', 'businessphone', 'officephone', 'personphonework'],
    [
      'mobile',
      'mobilephone',
      'mobilenumber',
      'mobilephonenumber',
      'cellphone',
      'cell',
      'personphonemobile',
      'mobiltelefon',
      'handy',
      'portable',
      'cellulare',
      'celular',
      'movil',
      'mobiel',
      'telemovel',
    ],
    ['homephone', 'personphonehome'],
    ['otherphone', 'personphoneother'],
  ],
  company: [
    [
      'company',
      'companyname',
      'companyaccount',
      'organization',
      'organisation',
      'organizationname',
      'accountname',
      'personorganization',
      'firma',
      'unternehmen',
      'organization1name',
      'societe',
      'entreprise',
      'empresa',
      'azienda',
      'societa',
      'bedrijf',
      'bedrijfsnaam',
    ],
    ['associatedcompany'],
  ],
};

const ALIAS = new Map<string, { target: AliasTarget; rank: number }>();
for (const [target, ranks] of Object.entries(HEADER_ALIASES) as [AliasTarget, string[][]][]) {
  ranks.forEach((aliases, rank) => {
    for (const alias of aliases) ALIAS.set(alias, { target, rank });
  });
}

/** A practical e-mail check: something@domain.tld, no spaces, at most 254 characters. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@.]+$/;

export type Column =
  | { kind: 'field'; field: LeadField; header: string; rank: number }
  | { kind: 'fullName'; header: string; rank: number }
  | { kind: 'custom'; key: string; header: string }
  | { kind: 'ignored'; header: string };

/** A column as the answer shows it. */
export interface ColumnView {
  header: string;
  mapsTo: LeadField | 'fullName' | 'custom' | 'ignored';
  /** From the `mapping` parameter rather than recognised by its name. */
  mapped: boolean;
}

/** Explicit column mapping: header name (as in the file) to what the column holds. */
export type ColumnMapping = Record<string, ColumnTarget>;

export function normalizeHeader(header: string): string {
  return header
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

function cleanHeader(cell: string, index: number): string {
  return (index === 0 ? cell.replace(/^\uFEFF/, '') : cell).trim();
}

/** The mapping entry for a header: exact name first, then the same name without case. */
function mappedTarget(mapping: ColumnMapping, header: string, used: Set<string>): ColumnTarget | undefined {
  if (Object.hasOwn(mapping, header)) {
    used.add(header);
    return mapping[header];
  }
  const key = Object.keys(mapping).find((name) => name.trim().toLowerCase() === header.toLowerCase());
  if (key === undefined) return undefined;
  used.add(key);
  return mapping[key];
}

/**
 * What each column of the file holds. Columns named in `mapping` hold what it says, and a field
 * the mapping names is taken from the mapped column only (other columns that look like it become
 * custom fields). Other columns are recognised by their names; the rest are custom metadata. A
 * mapping naming a column the file lacks, a field held twice at the same rank or a repeated custom
 * column name is a 400.
 */
export function mapHeader(cells: string[], mapping: ColumnMapping = {}): Column[] {
  if (cells.length > MAX_COLUMNS) {
    throw badRequest(`The header row has ${cells.length} columns; at most ${MAX_COLUMNS} are read`);
  }
  const used = new Set<string>();
  const explicitFields = new Set<string>();
  const headers = cells.map(cleanHeader);
  const targets = headers.map((header) => (header === '' ? undefined : mappedTarget(mapping, header, used)));
  for (const target of targets) {
    if (target === undefined || target === 'custom' || target === 'ignore') continue;
    if (explicitFields.has(target)) {
      throw badRequest(`The mapping maps two columns to ${target}; map one of them`);
    }
    explicitFields.add(target);
  }
  const unknown = Object.keys(mapping).filter((name) => !used.has(name));
  if (unknown.length > 0) {
    throw badRequest(
      `The mapping names ${unknown.length === 1 ? 'a column' : 'columns'} the header row does not have: ${unknown
        .slice(0, 5)
        .map((name) => `"${name.slice(0, 100)}"`)
        .join(', ')}`,
    );
  }

  const seenRanks = new Map<string, string>();
  // Spreadsheets repeat column names ("Notes", "Notes"; a report with two "Created Date"): a repeat is
  // kept under a numbered name, as the webhook numbers a repeated field ("Notes (2)").
  const customKeys = new Set(headers);
  const repeats = new Map<string, number>();
  const custom = (header: string): Column => {
    let key = header;
    const seen = repeats.get(header);
    if (seen !== undefined) {
      let count = seen;
      do key = `${header} (${++count})`;
      while (customKeys.has(key));
      repeats.set(header, count);
      customKeys.add(key);
    } else {
      repeats.set(header, 1);
    }
    // Its key is made safe with the row's custom data (the webhook's rules: see mapRow).
    return { kind: 'custom', key, header };
  };
  const columns = headers.map((header, index): Column => {
    const explicit = targets[index];
    if (explicit === 'ignore') return { kind: 'ignored', header };
    if (explicit === 'custom') return custom(header);
    if (explicit === 'fullName') return { kind: 'fullName', header, rank: -1 };
    if (explicit !== undefined) return { kind: 'field', field: explicit, header, rank: -1 };
    if (header === '') return { kind: 'ignored', header };
    const alias = ALIAS.get(normalizeHeader(header));
    if (!alias || explicitFields.has(alias.target)) return custom(header);
    const slot = `${alias.target}:${alias.rank}`;
    const earlier = seenRanks.get(slot);
    if (earlier !== undefined) {
      throw badRequest(
        `Columns "${earlier}" and "${header.slice(0, 100)}" both hold ${alias.target}; keep one of them or name the one to use in the mapping parameter`,
      );
    }
    seenRanks.set(slot, header.slice(0, 100));
    return alias.target === 'fullName'
      ? { kind: 'fullName', header, rank: alias.rank }
      : { kind: 'field', field: alias.target, header, rank: alias.rank };
  });
  if (!columns.some((column) => column.kind === 'field' || column.kind === 'fullName')) {
    throw badRequest(
      `The header row names none of the recognised columns: ${LEAD_FIELDS.join(', ')} (first row: ${cells
        .slice(0, 5)
        .join(', ')
        .slice(0, 200)}); name them with the mapping parameter`,
    );
  }
  return columns;
}

/**
 * Whether a row can be the header: it names a column of the mapping or a recognised one. Files made by
 * hand or by a report put a title, a date or blank lines above the header ("Leads - trade show
 * 2026"); the import looks for the header among the first rows (HEADER_SEARCH_ROWS).
 */
export function namesAColumn(cells: string[], mapping: ColumnMapping = {}): boolean {
  if (cells.length > MAX_COLUMNS) return false;
  const used = new Set<string>();
  return cells.map(cleanHeader).some((header) => {
    if (header === '') return false;
    if (mappedTarget(mapping, header, used) !== undefined) return true;
    return ALIAS.has(normalizeHeader(header));
  });
}

/** Rows (blank ones aside) above which the header is looked for. */
export const HEADER_SEARCH_ROWS = 10;

export function viewOfColumns(columns: Column[]): ColumnView[] {
  return columns.map((column) => ({
    header: column.header,
    mapsTo: column.kind === 'field' ? column.field : column.kind === 'fullName' ? 'fullName' : column.kind,
    mapped: 'rank' in column && column.rank === -1,
  }));
}

/**
 * Lines that reports append to their rows, alone in their row: Salesforce ends a report export with
 * "Grand Totals (3 records)", "Confidential Information - Do Not Distribute" and "Copyright (c)
 * 2000-2026 salesforce.com, inc. All rights reserved." (each in the first cell, after blank rows);
 * grouped reports add "Total" / "Subtotal" rows.
 */
const REPORT_LINES = [
  /^(grand\s+|sub)?totals?\b/i,
  /^confidential\b/i,
  /\bconfidential information\b/i,
  /^(copyright\b|©|\(c\)\s)/i,
  /\ball rights reserved\.?$/i,
];

export type RowOutcome =
  | { kind: 'blank' }
  | { kind: 'report'; line: string }
  | { kind: 'failed'; error: string }
  | {
      kind: 'lead';
      fields: Partial<Record<LeadField, string>>;
      custom: JsonObject;
      /** What of the row's custom data was left out to fit the limits, when something was. */
      trimmed?: string;
    };

/** A blank row, or a report line alone in its row: neither a lead nor an error. */
export function skippedRow(cells: string[]): { kind: 'blank' } | { kind: 'report'; line: string } | null {
  const filled = cells.filter((cell) => cell.trim() !== '');
  if (filled.length === 0) return { kind: 'blank' };
  if (filled.length > 1) return null;
  const line = filled[0]!.trim();
  return REPORT_LINES.some((pattern) => pattern.test(line)) ? { kind: 'report', line } : null;
}

/** Meta's export marks each value's type ("p:" phone, "l:" lead id ...) so spreadsheets keep it as text. */
const META_PHONE_PREFIX = /^p:(?=[+\d(])/;

/**
 * One data row: its standard fields and custom metadata, or why it cannot be imported, or a blank
 * or report line to skip. Custom metadata follows the webhook's rules (capture's fitCustomData):
 * a leading `$`, `.` and NUL in a key become `_`, `__proto__` / `constructor` / `prototype` are
 * dropped, and a lead keeps at most 100 custom fields and 32 KiB of custom data. Unlike the webhook,
 * a row over those limits is still imported: its custom columns are kept in column order while they
 * fit, a value that does not fit is left out whole (never cut), and `trimmed` says what was left
 * out. A standard field that breaks its rules (an invalid e-mail, a value longer than the webhook
 * allows) fails the row. A full name fills the first and last name when neither has a column value.
 */
export function mapRow(columns: Column[], cells: string[]): RowOutcome {
  const skipped = skippedRow(cells);
  if (skipped) return skipped;
  // Excel and hand-edited files end rows with empty cells past the header ("a@x.test,Ada,,"): only
  // a value beyond the header's columns is an error.
  const width = cells.findLastIndex((cell) => cell.trim() !== '') + 1;
  if (width > columns.length) {
    return { kind: 'failed', error: `Row has ${width} cells but the header has ${columns.length}` };
  }
  const candidates = new Map<LeadField, { rank: number; header: string; value: string }[]>();
  let fullName: { value: string; rank: number } | undefined;
  const custom: [string, string][] = [];
  columns.forEach((column, index) => {
    const value = cells[index]?.trim() ?? '';
    if (value === '') return;
    if (column.kind === 'field') {
      const list = candidates.get(column.field) ?? [];
      list.push({ rank: column.rank, header: column.header, value });
      candidates.set(column.field, list);
    } else if (column.kind === 'fullName') {
      if (fullName === undefined || column.rank < fullName.rank) fullName = { value, rank: column.rank };
    } else if (column.kind === 'custom') {
      custom.push([column.key, value]);
    }
  });
  const fields: Partial<Record<LeadField, string>> = {};
  for (const [field, list] of candidates) {
    const [preferred, ...others] = list.sort((a, b) => a.rank - b.rank);
    fields[field] = preferred!.value;
    // The values of the less preferred columns of a field stay with the lead, under their headers.
    for (const other of others) custom.push([other.header, other.value]);
  }
  if (fullName !== undefined && fields.firstName === undefined && fields.lastName === undefined) {
    const { firstName, lastName } = splitFullName(fullName.value);
    if (firstName !== undefined) fields.firstName = firstName;
    if (lastName !== undefined) fields.lastName = lastName;
  }
  if (fields.phone !== undefined) fields.phone = fields.phone.replace(META_PHONE_PREFIX, '');
  if (Object.keys(fields).length === 0) {
    return { kind: 'failed', error: 'Row has no email, first name, last name, phone or company' };
  }
  if (fields.email !== undefined) {
    // The webhook's rule first (one mailbox, never a list or a display name), then the import's own.
    const problem = emailFieldProblem(fields.email);
    if (problem) return { kind: 'failed', error: `email ${problem}` };
    if (fields.email.length > 254 || !EMAIL.test(fields.email)) {
      return { kind: 'failed', error: `Invalid email: ${fields.email.slice(0, 100)}` };
    }
  }
  for (const field of LEAD_FIELDS) {
    const value = fields[field];
    // Characters (code points), as the webhook counts them.
    if (value !== undefined && value.length > FIELD_MAX_LENGTH[field]) {
      if (Array.from(value).length > FIELD_MAX_LENGTH[field]) {
        return { kind: 'failed', error: `${field} must be at most ${FIELD_MAX_LENGTH[field]} characters` };
      }
    }
  }
  const fitted = fitCustomData(custom);
  const trimmed = trimmedReason(fitted);
  return { kind: 'lead', fields, custom: fitted.custom, ...(trimmed ? { trimmed } : {}) };
}

/**
 * What fitting a row's custom data left out, as the import reports it ("37 custom columns not kept:
 * a lead keeps at most 100 custom fields (first dropped: Last Activity Date)"), or undefined.
 */
export function trimmedReason(fitted: FittedCustomData): string | undefined {
  const { maxKeysPerObject, maxCustomBytes } = PAYLOAD_LIMITS;
  const parts = [
    describeDropped(fitted.overSizeLimit, `a lead keeps at most ${maxCustomBytes / 1024} KiB of custom data`),
    describeDropped(fitted.overFieldLimit, `a lead keeps at most ${maxKeysPerObject} custom fields`),
  ].filter((part) => part !== undefined);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

function describeDropped(headers: string[], rule: string): string | undefined {
  if (headers.length === 0) return undefined;
  const count = headers.length === 1 ? '1 custom column' : `${headers.length} custom columns`;
  return `${count} not kept: ${rule} (first dropped: ${headers[0]!.slice(0, 100)})`;
}
