import { MongoServerError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { DuplicateKeyError } from '../types.js';
import { databaseName, translateError } from './store.js';

describe('MongoDB store helpers', () => {
  it('takes the database from the URL path, lead_capture when there is none', () => {
    expect(databaseName('mongodb://localhost:27017/crm?replicaSet=rs0')).toBe('crm');
    expect(databaseName('mongodb+srv://user:p%40ss@cluster.example.net/sales')).toBe('sales');
    expect(databaseName('mongodb://a:27017,b:27017/?replicaSet=rs0')).toBe('lead_capture');
    expect(databaseName('mongodb://localhost')).toBe('lead_capture');
  });

  it("turns the driver's duplicate key error into DuplicateKeyError, and leaves others alone", () => {
    const duplicate = new MongoServerError({
      message:
        'E11000 duplicate key error collection: crm.leads index: email_1 dup key: { email: "a@x.example" }',
      code: 11000,
      keyPattern: { email: 1 },
      keyValue: { email: 'a@x.example' },
    });
    const translated = translateError(duplicate);
    expect(translated).toBeInstanceOf(DuplicateKeyError);
    expect(translated).toMatchObject({ code: 11000, keyValue: { email: 'a@x.example' }, cause: duplicate });

    const other = new MongoServerError({ message: 'not primary', code: 10107 });
    expect(translateError(other)).toBe(other);
  });
});
