import type { LeadDoc } from '../store.js';
import { sourceView, tagsOf, type ViewContext } from '../views.js';

export const EXPORT_COLUMNS = [
  'id',
  'firstName',
  'lastName',
  'email',
  'phone',
  'company',
  'status',
  'score',
  'qualification',
  'source',
  'tags',
  'assignedTo',
  'createdAt',
] as const;

export type ExportRow = Record<(typeof EXPORT_COLUMNS)[number], string>;

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A phone in E.164: a plus and digits only, which no spreadsheet can run as anything but a number. */
const E164 = /^\+[1-9]\d{1,14}$/;

/** Prefixes a `'` to a cell a spreadsheet would evaluate, so it shows as the text it is. */
export function neutraliseFormula(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

function phoneCell(phone: string | null): string {
  if (!phone) return '';
  return E164.test(phone) ? phone : neutraliseFormula(phone);
}

export function toExportRow(lead: LeadDoc, context: ViewContext): ExportRow {
  const text = (value: string | null) => neutraliseFormula(value ?? '');
  return {
    id: lead._id,
    firstName: text(lead.firstName),
    lastName: text(lead.lastName),
    email: text(lead.email),
    phone: phoneCell(lead.phone),
    company: text(lead.company),
    status: lead.status,
    score: String(lead.score),
    qualification: lead.qualification ?? '',
    source: text(sourceView(lead, context).name),
    tags: text(
      tagsOf(lead, context)
        .map((tag) => tag.name)
        .join('; '),
    ),
    assignedTo: lead.assignedTo ?? '',
    createdAt: lead.createdAt,
  };
}
