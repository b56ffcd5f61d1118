/**
 * Vocabulary shared by the event payloads (and the HTTP API): value sets, and the JSON-schema
 * fragments the event schemas are built from.
 */

/** Standard lead fields; a source's field mapping may only target these. */
export const LEAD_FIELDS = ['email', 'firstName', 'lastName', 'phone', 'company'] as const;
export type LeadField = (typeof LEAD_FIELDS)[number];

export const LEAD_STATUSES = ['new', 'contacted', 'qualified', 'converted', 'closed'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

export const QUALIFICATIONS = ['hot', 'warm', 'cold'] as const;
export type Qualification = (typeof QUALIFICATIONS)[number];

export const USER_ROLES = ['admin', 'member'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const UTM_PARAMETERS = [
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
] as const;
export type UtmParameter = (typeof UTM_PARAMETERS)[number];

/** Free-form key/value data (custom metadata, enrichment details, changes). */
export type JsonObject = Record<string, unknown>;

export interface Attribution {
  utm?: Partial<Record<UtmParameter, string>>;
  referrer?: string;
}

export interface ClientInfo {
  ip?: string;
  userAgent?: string;
}

/** The lead as it stands when the event is published: what the next stage needs without a lookup. */
export interface LeadSnapshot {
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  custom: JsonObject;
  attribution: Attribution;
  client: ClientInfo;
  sourceId: string;
  sourceName: string;
  status: LeadStatus;
  tags: string[];
  createdAt: string;
}

// --- schema fragments -------------------------------------------------------------------------
// Objects allow additional properties (tolerant reader): producers may add fields before every
// consumer knows them. Only the core fields are required.

/** Increases with every change of an entity; read models ignore an event older than what they hold. */
export const revision = { type: 'integer', minimum: 1 } as const;

export const uuid = { type: 'string', format: 'uuid' } as const;
export const dateTime = { type: 'string', format: 'date-time' } as const;
export const text = { type: 'string' } as const;
export const nonEmptyText = { type: 'string', minLength: 1 } as const;
export const nullableText = { type: ['string', 'null'] } as const;
export const freeObject = { type: 'object' } as const;

export const attributionSchema = {
  type: 'object',
  properties: {
    utm: {
      type: 'object',
      properties: Object.fromEntries(UTM_PARAMETERS.map((name) => [name, text])),
    },
    referrer: text,
  },
} as const;

export const clientSchema = {
  type: 'object',
  properties: { ip: text, userAgent: text },
} as const;

export const leadSnapshotSchema = {
  type: 'object',
  required: [
    'firstName',
    'lastName',
    'email',
    'phone',
    'company',
    'custom',
    'attribution',
    'client',
    'sourceId',
    'sourceName',
    'status',
    'tags',
    'createdAt',
  ],
  properties: {
    firstName: nullableText,
    lastName: nullableText,
    email: nullableText,
    phone: nullableText,
    company: nullableText,
    custom: freeObject,
    attribution: attributionSchema,
    client: clientSchema,
    sourceId: uuid,
    sourceName: text,
    status: { enum: LEAD_STATUSES },
    tags: { type: 'array', items: text },
    createdAt: dateTime,
  },
} as const;

export const fieldMappingsSchema = {
  type: 'object',
  additionalProperties: { enum: LEAD_FIELDS },
} as const;

/**
 * The source of leads created by CSV import. It has no webhook; its fixed id lets the lead list be
 * filtered by it (`sourceId=`) and keeps imports recognisable across installs.
 */
export const CSV_IMPORT_SOURCE = { id: '00000000-0000-4000-8000-00000000c5f1', name: 'CSV import' } as const;
