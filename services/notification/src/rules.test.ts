import { describe, expect, it } from 'vitest';
import { recipientsFor } from './rules.js';
import type { NotificationSettings } from './settings.js';

const SOURCE = '0b9e7d2c-5a41-4f6e-8c3d-1e2f3a4b5c6d';
const OTHER_SOURCE = '7c1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5e';

const enabled: NotificationSettings = {
  enabled: true,
  recipients: ['sales@example.com', 'ops@example.com'],
  qualifications: ['hot', 'warm'],
};

describe('recipientsFor', () => {
  it('mails every recipient about a lead whose qualification is chosen', () => {
    expect(recipientsFor(enabled, { qualification: 'hot', sourceId: SOURCE })).toEqual([
      'sales@example.com',
      'ops@example.com',
    ]);
    expect(recipientsFor(enabled, { qualification: 'warm', sourceId: SOURCE })).toHaveLength(2);
  });

  it('mails nobody about a qualification not chosen', () => {
    expect(recipientsFor(enabled, { qualification: 'cold', sourceId: SOURCE })).toEqual([]);
  });

  it('mails nobody while disabled, whatever else matches', () => {
    expect(recipientsFor({ ...enabled, enabled: false }, { qualification: 'hot', sourceId: SOURCE })).toEqual(
      [],
    );
  });

  it('takes every source when no source is listed, or the list is empty', () => {
    expect(recipientsFor(enabled, { qualification: 'hot', sourceId: OTHER_SOURCE })).toHaveLength(2);
    expect(
      recipientsFor({ ...enabled, sourceIds: [] }, { qualification: 'hot', sourceId: OTHER_SOURCE }),
    ).toHaveLength(2);
  });

  it('takes only the listed sources when some are, whatever the case of the id', () => {
    const onlyOne = { ...enabled, sourceIds: [SOURCE] };
    expect(recipientsFor(onlyOne, { qualification: 'hot', sourceId: SOURCE.toUpperCase() })).toHaveLength(2);
    expect(recipientsFor(onlyOne, { qualification: 'hot', sourceId: OTHER_SOURCE })).toEqual([]);
  });
});
