import {
  DEFAULT_NAME_SPLIT,
  MAPPING_TARGETS,
  NAME_SPLIT_RULES,
  propertiesNamed,
  type SchemaType,
  SOURCE_FORMATS,
} from '@lead-capture/contracts';

import { closedObject, ID_PARAMS_SCHEMA } from '@lead-capture/kit';
import { SECRET_FIELDS } from './sources.js';

export { errorResponses } from '@lead-capture/kit';

export const TAGS = ['Sources'];

/** Malformed ids are not refused by the schema: any id that names no source is 404 "Source not found". */
export const SOURCE_PARAMS = ID_PARAMS_SCHEMA;
export type SourceParams = SchemaType<typeof SOURCE_PARAMS>;

/** Checked further in code: trimmed length (name), entries and targets (fieldMappings). */
const nameField = { type: 'string', description: '1-255 characters after trimming' } as const;
const fieldMappingsField = {
  type: 'object',
  description:
    'Incoming field name -> target; at most 100 entries. The name is a dotted path (a numeric segment indexes an array), ' +
    '`[key=value]` selects an array item by a key (`fields[name=email].value`), and a segment reaching into a string ' +
    `holding JSON reads the decoded JSON. Targets: ${MAPPING_TARGETS.join(', ')} (fullName is split into first and last name)`,
} as const;

/** Write-only: a string sets it, null clears it; answers only say whether it is set. */
const secretField = (description: string) =>
  ({ type: ['string', 'null'], minLength: 1, maxLength: 1024, description }) as const;

const sourceFields = {
  name: nameField,
  fieldMappings: fieldMappingsField,
  format: {
    type: 'string',
    enum: SOURCE_FORMATS,
    description:
      'The tool this source receives from; its payload is turned into flat named fields before the mappings apply (default generic)',
  },
  nameSplit: {
    type: 'string',
    enum: NAME_SPLIT_RULES,
    description:
      `How a full name (a fullName mapping, a format's full-name field) is split (default ${DEFAULT_NAME_SPLIT}): ` +
      'first-word: the first word is the first name, the rest the last name ("Tomás Herrera Vidal" -> Tomás / Herrera Vidal); ' +
      'last-word: the last word, with its particles (van, de la, bin...), is the last name, the words before it the first name ' +
      '("Mary Jane Watson" -> Mary Jane / Watson); as-is: the whole name in firstName, lastName empty. ' +
      'Both splitting rules drop titles and credentials (Dr., PhD), keep Jr./III with the last name and read "Last, First"',
  },
  verifyToken: secretField("Meta's hub.verify_token for the GET verification handshake (write-only)"),
  signingSecret: secretField(
    "Shared secret the tool signs deliveries with; checked with the format's own scheme (write-only)",
  ),
  graphAccessToken: secretField('Meta Graph API access token to fetch leadgen leads (write-only)'),
} as const;

export const CREATE_SOURCE_BODY = closedObject(sourceFields, ['name']);
export type CreateSourceBody = SchemaType<typeof CREATE_SOURCE_BODY>;

export const UPDATE_SOURCE_BODY = closedObject(sourceFields, []);
export type UpdateSourceBody = SchemaType<typeof UPDATE_SOURCE_BODY>;

export const PREVIEW_BODY = closedObject(
  {
    payload: { description: 'A sample webhook payload (a JSON array for formats that post one)' },
    format: {
      ...sourceFields.format,
      description: "Try another format than the source's (nothing is saved)",
    },
    nameSplit: {
      ...sourceFields.nameSplit,
      description: "Try another name-split rule than the source's (nothing is saved)",
    },
    fieldMappings: {
      ...fieldMappingsField,
      description: `Try these mappings instead of the source's saved ones, checked as a save checks them (nothing is saved). ${fieldMappingsField.description}`,
    },
  },
  ['payload'],
);
export type PreviewBody = SchemaType<typeof PREVIEW_BODY>;

const fieldMappingsOut = { type: 'object', additionalProperties: { type: 'string' } } as const;

const createdSourceProperties = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  webhookToken: { type: 'string' },
  webhookUrl: { type: 'string' },
  fieldMappings: fieldMappingsOut,
  createdAt: { type: 'string', format: 'date-time' },
} as const;

/** POST /api/sources answers this (the contract's list; createdBy is the caller). */
export const CREATED_SOURCE = closedObject(createdSourceProperties);

/** Every other answer with a source: the list items, GET one and PUT. */
export const SOURCE = closedObject({
  ...createdSourceProperties,
  format: { type: 'string', enum: SOURCE_FORMATS },
  nameSplit: { type: 'string', enum: NAME_SPLIT_RULES },
  secretsSet: {
    ...closedObject(propertiesNamed(SECRET_FIELDS, { type: 'boolean' } as const)),
    description: 'Which write-only secrets are set (their values are never shown)',
  },
  webhookToken: {
    type: ['string', 'null'],
    description: 'The webhook token; null for a read-only API key (the token lets its holder create leads)',
  },
  webhookUrl: { type: ['string', 'null'], description: 'The webhook URL; null for a read-only API key' },
  createdBy: {
    ...closedObject({
      id: { type: 'string' },
      name: { type: ['string', 'null'] },
      email: { type: ['string', 'null'] },
    }),
    description: 'The creating user; name and email are null when the user is unknown or deleted',
  },
});

export const TOKEN = closedObject({ webhookToken: { type: 'string' }, webhookUrl: { type: 'string' } });

export const PREVIEW = {
  ...closedObject(
    {
      valid: { type: 'boolean' },
      error: { type: 'string' },
      format: { type: 'string', enum: SOURCE_FORMATS },
      nameSplit: { type: 'string', enum: NAME_SPLIT_RULES },
      fields: { type: 'object', additionalProperties: { type: 'string' } },
      custom: { type: 'object', additionalProperties: true },
      attribution: { type: 'object', additionalProperties: true },
      origins: {
        type: 'object',
        description:
          'Each standard field and attribution value that got one (email, firstName, utm_source, gclid, landingPage...) -> ' +
          'where it came from: key, the payload field (as a mapping names it), and by: mapping (your field mapping), ' +
          "format (the format's reading of its tool), name (the field is named as the target: email, utm_source, _utm), " +
          'fullName (split from the full name at key), url (the query string of the page URL at key)',
        additionalProperties: closedObject({
          key: { type: 'string' },
          by: { type: 'string', enum: ['mapping', 'format', 'name', 'fullName', 'url'] },
        }),
      },
      unmapped: {
        type: 'array',
        description:
          'Every field left over, kept as custom data: key is the exact name a field mapping takes it by, customKey its key in custom',
        items: closedObject({ key: { type: 'string' }, customKey: { type: 'string' } }),
      },
    },
    ['valid'],
  ),
  description:
    'valid: true with what the webhook would store, or valid: false with the error the sender would get (400)',
} as const;
