import { propertiesNamed, type SchemaType } from './schema-type.js';

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

/** Ad platforms' click ids, kept with a lead's attribution (Google, Meta, Microsoft, LinkedIn, TikTok, X). */
export const CLICK_ID_PARAMETERS = [
  'gclid',
  'gbraid',
  'wbraid',
  'fbclid',
  'msclkid',
  'li_fat_id',
  'ttclid',
  'twclid',
] as const;
export type ClickIdParameter = (typeof CLICK_ID_PARAMETERS)[number];

/**
 * What a source's field mapping may target: a standard lead field, `fullName` (split into first and
 * last name), or a piece of attribution.
 */
export const MAPPING_TARGETS = [
  ...LEAD_FIELDS,
  'fullName',
  ...UTM_PARAMETERS,
  'referrer',
  'landingPage',
  ...CLICK_ID_PARAMETERS,
] as const;
export type MappingTarget = (typeof MAPPING_TARGETS)[number];

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
    utm: { type: 'object', properties: propertiesNamed(UTM_PARAMETERS, text) },
    referrer: text,
    /** The page the form was filled in on. */
    landingPage: text,
    clickIds: { type: 'object', properties: propertiesNamed(CLICK_ID_PARAMETERS, text) },
  },
} as const;

export const clientSchema = {
  type: 'object',
  properties: { ip: text, userAgent: text },
} as const;

/** The lead as it stands when the event is published: what the next stage needs without a lookup. */
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
    /** false when the submission asked for no sequence enrolment (lead.received's `enrol`); else absent. */
    enrol: { type: 'boolean' },
  },
} as const;

/** Incoming field name (a selector) -> the lead field or attribution it fills. */
export const fieldMappingsSchema = {
  type: 'object',
  additionalProperties: { enum: MAPPING_TARGETS },
} as const;

// --- the types of the shared shapes, derived from their schemas ------------------------------

/** Free-form key/value data (custom metadata, enrichment details, changes). */
export type JsonObject = SchemaType<typeof freeObject>;
export type Attribution = SchemaType<typeof attributionSchema>;
export type ClientInfo = SchemaType<typeof clientSchema>;
/** The lead as it stands when the event is published: what the next stage needs without a lookup. */
export type LeadSnapshot = SchemaType<typeof leadSnapshotSchema>;

/**
 * The source of leads created by CSV import. It has no webhook; its fixed id lets the lead list be
 * filtered by it (`sourceId=`) and keeps imports recognisable across installs.
 */
export const CSV_IMPORT_SOURCE = { id: '00000000-0000-4000-8000-00000000c5f1', name: 'CSV import' } as const;
