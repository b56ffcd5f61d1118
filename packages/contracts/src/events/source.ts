import { dateTime, fieldMappingsSchema, nonEmptyText, nullableText, revision, text, uuid } from './common.js';
import { objectSchema, type SchemaType } from './schema-type.js';

const sourceName = { type: 'string', minLength: 1, maxLength: 255 } as const;

/**
 * The tool a source receives from: its format turns the tool's payload into flat named fields
 * before the field mappings apply (see @lead-capture/capture). `generic` takes the payload as it is.
 */
export const SOURCE_FORMATS = [
  'generic',
  'typeform',
  'facebook-lead-ads',
  'google-ads',
  'hubspot-forms',
  'linkedin',
  'calendly',
  'tally',
  'jotform',
  'elementor',
  'gravity-forms',
  'webflow',
  'unbounce',
  'mailchimp',
  'zapier',
  'elfsight',
  'formstack',
] as const;
export type SourceFormat = (typeof SOURCE_FORMATS)[number];

/**
 * How a full name (a `fullName` mapping, a format's "Full Name") is split into first and last name:
 * `first-word` (the default) takes the first word as the first name and the rest as the last name
 * (two surnames stay together: "Tomás Herrera Vidal"); `last-word` takes the last word, with its
 * particles (van, de la, bin, ...), as the last name and the words before as the first name (middle
 * names stay with the first name: "Mary Jane Watson"); `as-is` keeps the whole name, as typed, in the
 * first name and leaves the last name empty. Titles and credentials are dropped and Jr./III kept with
 * the last name by both splitting rules; "Last, First" is read as such by both.
 */
export const NAME_SPLIT_RULES = ['first-word', 'last-word', 'as-is'] as const;
export type NameSplitRule = (typeof NAME_SPLIT_RULES)[number];
export const DEFAULT_NAME_SPLIT: NameSplitRule = 'first-word';

/**
 * How a source receives: its format, its name-split rule and its write-only secrets (null: not set): Meta's
 * `hub.verify_token`, the shared secret the tool signs deliveries with, the Meta Graph API token.
 * They travel in the events and the synchronous call like the webhook token; never in an API
 * answer or a log. Absent from an event: unchanged.
 */
export const receivingSchemaProperties = {
  format: { enum: SOURCE_FORMATS },
  nameSplit: { enum: NAME_SPLIT_RULES },
  verifyToken: nullableText,
  signingSecret: nullableText,
  graphAccessToken: nullableText,
} as const;

const userRefSchema = objectSchema(['id', 'name', 'email'], { id: uuid, name: text, email: text });

// `revision` increases with every change of the source; read models ignore an event older than
// what they hold.
export const SOURCE_EVENT_SCHEMAS = {
  'source.created': {
    type: 'object',
    required: ['sourceId', 'name', 'webhookToken', 'fieldMappings', 'createdAt', 'createdBy'],
    properties: {
      sourceId: uuid,
      revision,
      name: sourceName,
      /** The credential in the webhook URL; the intake keeps a token -> source read model. */
      webhookToken: nonEmptyText,
      fieldMappings: fieldMappingsSchema,
      ...receivingSchemaProperties,
      createdAt: dateTime,
      createdBy: userRefSchema,
    },
  },
  'source.updated': {
    type: 'object',
    required: ['sourceId', 'name', 'fieldMappings'],
    properties: {
      sourceId: uuid,
      revision,
      name: sourceName,
      fieldMappings: fieldMappingsSchema,
      ...receivingSchemaProperties,
    },
  },
  /** The new token; the previous one stops working as soon as this is consumed. */
  'source.token_rotated': objectSchema(['sourceId', 'webhookToken'], {
    sourceId: uuid,
    revision,
    webhookToken: nonEmptyText,
  }),
  'source.deleted': objectSchema(['sourceId'], { sourceId: uuid, revision }),
} as const;

export type SourceCreated = SchemaType<(typeof SOURCE_EVENT_SCHEMAS)['source.created']>;
export type SourceUpdated = SchemaType<(typeof SOURCE_EVENT_SCHEMAS)['source.updated']>;
export type SourceTokenRotated = SchemaType<(typeof SOURCE_EVENT_SCHEMAS)['source.token_rotated']>;
export type SourceDeleted = SchemaType<(typeof SOURCE_EVENT_SCHEMAS)['source.deleted']>;

/** Incoming field name (a selector) -> the lead field or attribution it fills. */
export type FieldMappings = SchemaType<typeof fieldMappingsSchema>;
export type UserRef = SchemaType<typeof userRefSchema>;
export type SourceReceiving = SchemaType<{ type: 'object'; properties: typeof receivingSchemaProperties }>;
