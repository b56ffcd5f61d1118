import { QUALIFICATIONS, type SchemaType } from '@lead-capture/contracts';
import { pagedListSchema, pagedQuerySchema } from '@lead-capture/kit';
import { MAIL_STATUSES } from './mails.js';
import { MAX_RECIPIENTS, MAX_SOURCE_IDS } from './settings.js';

export { errorResponses } from '@lead-capture/kit';

export const TAGS = ['Notifications'];

const settingsProperties = {
  enabled: { type: 'boolean' },
  recipients: {
    type: 'array',
    maxItems: MAX_RECIPIENTS,
    items: { type: 'string', format: 'email', maxLength: 254 },
    description: `E-mail addresses, at most ${MAX_RECIPIENTS}; repeated ones (compared case-insensitively) are kept once`,
  },
  qualifications: {
    type: 'array',
    maxItems: QUALIFICATIONS.length,
    items: { type: 'string', enum: QUALIFICATIONS },
    description: 'Which qualifications are mailed about',
  },
  sourceIds: {
    type: 'array',
    maxItems: MAX_SOURCE_IDS,
    items: { type: 'string', format: 'uuid' },
    description: 'Only leads of these sources; absent or empty: every source',
  },
} as const;

/** Who gets an e-mail about which scored leads: what GET answers and PUT replaces. */
export const SETTINGS = {
  type: 'object',
  required: ['enabled', 'recipients', 'qualifications'],
  additionalProperties: false,
  properties: settingsProperties,
} as const;

export type NotificationSettings = SchemaType<typeof SETTINGS>;

export const MAIL_LIST_QUERY = pagedQuerySchema({
  leadId: { type: 'string', format: 'uuid' },
  status: { type: 'string', enum: MAIL_STATUSES },
});

const mailProperties = {
  id: { type: 'string', format: 'uuid' },
  leadId: { type: 'string', format: 'uuid' },
  to: { type: 'string' },
  subject: { type: 'string' },
  status: { type: 'string', enum: MAIL_STATUSES },
  createdAt: { type: 'string', format: 'date-time' },
  sentAt: {
    type: ['string', 'null'],
    description: 'When the SMTP server took it (or it went to the outbox)',
  },
  error: { type: 'string', description: 'Why the last attempt failed (status failed)' },
} as const;

export type MailListQuery = SchemaType<typeof MAIL_LIST_QUERY>;

export const MAIL_LIST = pagedListSchema({
  type: 'object',
  required: ['id', 'leadId', 'to', 'subject', 'status', 'createdAt', 'sentAt'],
  additionalProperties: false,
  properties: mailProperties,
} as const);
