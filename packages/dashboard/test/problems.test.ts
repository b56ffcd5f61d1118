import { describe, expect, it } from 'vitest';
import { fieldProblems } from '../app/api/problems.js';

const USER_FIELDS = { name: 'Name', email: 'E-mail', password: 'Password', role: 'Role' };

describe('fieldProblems: an API error next to its field, in words', () => {
  it('puts a message that starts with the field name under that field, in its words', () => {
    expect(fieldProblems('password must be at least 8 characters long', USER_FIELDS)).toEqual({
      byField: { password: 'Password must be at least 8 characters long' },
      rest: undefined,
    });
    expect(
      fieldProblems('expiresAt must be in the future', { label: 'Label', expiresAt: 'The expiry date' }),
    ).toEqual({ byField: { expiresAt: 'The expiry date must be in the future' }, rest: undefined });
  });

  it('names the item of a list field the API points at', () => {
    const emails = ['ops@example.com', 'not-an-email'];
    const words = (index: number | undefined) =>
      index === undefined ? 'The alert e-mails' : `The alert e-mail "${emails[index]}"`;
    expect(fieldProblems('alertEmails[1] must be a valid email address', { alertEmails: words })).toEqual({
      byField: { alertEmails: 'The alert e-mail "not-an-email" must be a valid email address' },
      rest: undefined,
    });
    expect(fieldProblems('alertEmails must have at most 10 items', { alertEmails: words }).byField).toEqual({
      alertEmails: 'The alert e-mails must have at most 10 items',
    });
  });

  it('puts a message that names the field elsewhere under it, unchanged', () => {
    expect(fieldProblems('A user with this email already exists', USER_FIELDS)).toEqual({
      byField: { email: 'A user with this email already exists' },
      rest: undefined,
    });
  });

  it('leaves a message about no field (or a part of a word) to the form', () => {
    expect(fieldProblems('Too many requests, retry in 30 s', USER_FIELDS)).toEqual({
      byField: {},
      rest: 'Too many requests, retry in 30 s',
    });
    expect(fieldProblems('The username is taken', USER_FIELDS).rest).toBe('The username is taken');
    expect(fieldProblems(undefined, USER_FIELDS)).toEqual({ byField: {}, rest: undefined });
  });
});
