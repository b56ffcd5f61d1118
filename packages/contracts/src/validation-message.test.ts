import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { describeValidationError } from './validation-message.js';

const ajv = new Ajv({ allErrors: false, allowUnionTypes: true });
addFormats(ajv);

const schema = {
  type: 'object',
  required: ['email'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', format: 'email' },
    limit: { type: 'integer', maximum: 100 },
    status: { enum: ['new', 'contacted'] },
    name: { type: 'string', minLength: 1, maxLength: 5 },
    code: { type: 'string', minLength: 3 },
    kind: { const: 'lead' },
    note: { type: ['string', 'null'] },
    tags: { type: 'array', maxItems: 2, items: { type: 'string' } },
    stages: { type: 'array', minItems: 1, items: { type: 'object', required: ['name'] } },
    'a/b': { type: 'number' },
    color: { type: 'string', pattern: '^#[0-9a-f]{6}$' },
  },
};
const validate = ajv.compile(schema);

function messageFor(data: unknown): string {
  expect(validate(data)).toBe(false);
  return describeValidationError(validate.errors![0]!, 'Request body');
}

describe('describeValidationError', () => {
  it.each([
    ['a missing field', {}, 'email is required'],
    ['a wrong type', { email: 5 }, 'email must be a string'],
    ['a bad format', { email: 'nope' }, 'email must be a valid email address'],
    ['a maximum', { email: 'a@b.co', limit: 101 }, 'limit must be <= 100'],
    ['an integer', { email: 'a@b.co', limit: 1.5 }, 'limit must be an integer'],
    ['an enum', { email: 'a@b.co', status: 'won' }, 'status must be one of: new, contacted'],
    ['an empty string', { email: 'a@b.co', name: '' }, 'name must not be empty'],
    ['a minimum length', { email: 'a@b.co', code: 'ab' }, 'code must be at least 3 characters long'],
    ['a maximum length', { email: 'a@b.co', name: 'abcdef' }, 'name must be at most 5 characters long'],
    ['a constant', { email: 'a@b.co', kind: 'deal' }, 'kind must be "lead"'],
    ['a union type', { email: 'a@b.co', note: 1 }, 'note must be a string or null'],
    ['too many items', { email: 'a@b.co', tags: ['a', 'b', 'c'] }, 'tags must have at most 2 items'],
    ['too few items', { email: 'a@b.co', stages: [] }, 'stages must have at least 1 item'],
    ['a nested missing field', { email: 'a@b.co', stages: [{}] }, 'stages[0].name is required'],
    ['an array item', { email: 'a@b.co', tags: ['a', 2] }, 'tags[1] must be a string'],
    ['an escaped key', { email: 'a@b.co', 'a/b': 'x' }, 'a/b must be a number'],
    ['an unknown field', { email: 'a@b.co', admin: true }, 'admin is not an allowed field'],
    ['a pattern', { email: 'a@b.co', color: 'red' }, 'color must match pattern "^#[0-9a-f]{6}$"'],
    ['the whole value', 'text', 'Request body must be an object'],
  ])('describes %s', (_case, data, message) => {
    expect(messageFor(data)).toBe(message);
  });
});
