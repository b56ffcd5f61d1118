import { describe, expect, it } from 'vitest';
import { mapped } from './formats.test-helpers.js';
import { mapSubmission } from './map-submission.js';

describe('Google Forms through Apps Script: each answer a list of one', () => {
  // An installable "on form submit" trigger's event has namedValues, "an object containing the
  // question names and values from the form submission": {'First Name': ['Jane'], 'Timestamp':
  // ['6/7/2015 20:54:13'], 'Last Name': ['Doe']} (developers.google.com/apps-script/guides/triggers/events).
  // A script posts it as it is: JSON.stringify(e.namedValues).
  const namedValues = {
    Timestamp: ['11/28/2026 10:00:00'],
    'Email Address': ['ana@souza.test'],
    'Full Name': ['Ana Souza'],
    'Phone Number': ['+55 11 91234-5678'],
    Company: ['Souza Ltda'],
    'Which products?': ['CRM, API'],
  };

  it('zapier (common names): the standard fields from their one answer', () => {
    const submission = mapped('zapier', namedValues);
    expect(submission.fields).toEqual({
      email: 'ana@souza.test',
      firstName: 'Ana',
      lastName: 'Souza',
      phone: '+55 11 91234-5678',
      company: 'Souza Ltda',
    });
    expect(submission.custom).toEqual({
      Timestamp: ['11/28/2026 10:00:00'],
      'Which products?': ['CRM, API'],
    });
  });

  it('generic with mappings: a mapped answer of one is its text; a list of two is still refused', () => {
    const submission = mapped('generic', namedValues, {
      'Email Address': 'email',
      'Full Name': 'fullName',
      'Phone Number': 'phone',
    });
    expect(submission.fields).toEqual({
      email: 'ana@souza.test',
      firstName: 'Ana',
      lastName: 'Souza',
      phone: '+55 11 91234-5678',
    });
    expect(
      mapSubmission({ 'Email Address': ['a@x.test', 'b@x.test'] }, { 'Email Address': 'email' }),
    ).toEqual({
      ok: false,
      error: 'Email Address (mapped to email) must be a string',
    });
  });
});

describe("a format's guess from a field's name never refuses a lead", () => {
  it('zapier: a name sent as an object and a phone as parts stay custom data', () => {
    // A Zap that passes a step's whole output: "name": {"first", "last"}.
    const payload = {
      name: { first: 'Ada', last: 'Lovelace' },
      email: 'ada@analytical.test',
      phone: { country_code: '+44', number: '7700900123' },
    };
    const submission = mapped('zapier', payload);
    expect(submission.fields).toEqual({ email: 'ada@analytical.test' });
    expect(submission.custom).toEqual({
      name: { first: 'Ada', last: 'Lovelace' },
      phone: { country_code: '+44', number: '7700900123' },
    });
    // The same value under the source's own mapping is what its owner asked for: still a 400.
    expect(mapSubmission(payload, { name: 'fullName' }, 'zapier')).toEqual({
      ok: false,
      error: 'name (mapped to fullName) must be a string',
    });
  });

  it('elementor: a checkbox group labelled "Company" stays custom data', () => {
    const submission = mapped('elementor', {
      Email: 'ada@analytical.test',
      Name: 'Ada Lovelace',
      Company: ['Analytical Engines', 'Difference Engines'],
    });
    expect(submission.fields).toEqual({
      email: 'ada@analytical.test',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    expect(submission.custom).toEqual({ Company: ['Analytical Engines', 'Difference Engines'] });
  });
});

describe('hubspot-forms: the contact a HubSpot workflow posts', () => {
  it('reads properties.<name>.value of a contact-based workflow, and its last form page', () => {
    // "The webhook will POST the data for the object going through the workflow. The data will be the
    // exact same data you'd get when pulling that object using the relevant object API"; contact-based
    // workflows include "the most recent property value plus any historical property values"
    // (developers.hubspot.com/docs/methods/workflows/webhook_information): the v1 contact
    // (legacydocs.hubspot.com/docs/methods/contacts/get_contact).
    const submission = mapped('hubspot-forms', {
      vid: 3234574,
      'canonical-vid': 3234574,
      'merged-vids': [],
      'portal-id': 62515,
      'is-contact': true,
      properties: {
        email: {
          value: 'testingapis@hubspot.test',
          versions: [{ value: 'testingapis@hubspot.test', 'source-type': 'API', timestamp: 1484026585613 }],
        },
        firstname: { value: 'Codey', versions: [] },
        lastname: { value: 'Huang', versions: [] },
        phone: { value: '555-122-2323', versions: [] },
        company: { value: 'HubSpot', versions: [] },
        lifecyclestage: { value: 'lead', versions: [] },
      },
      'form-submissions': [
        {
          'conversion-id': 'a1',
          timestamp: 1484026585000,
          'form-id': 'f1',
          'portal-id': 62515,
          'page-url': 'https://www.example.test/old?utm_source=old',
          title: 'Old form',
        },
        {
          'conversion-id': 'b2',
          timestamp: 1484026590000,
          'form-id': 'f2',
          'portal-id': 62515,
          'page-url': 'https://www.example.test/demo?utm_source=google&utm_campaign=spring',
          title: 'Demo request',
        },
      ],
      'identity-profiles': [],
    });
    expect(submission.fields).toEqual({
      email: 'testingapis@hubspot.test',
      firstName: 'Codey',
      lastName: 'Huang',
      phone: '555-122-2323',
      company: 'HubSpot',
    });
    expect(submission.attribution).toEqual({
      landingPage: 'https://www.example.test/demo?utm_source=google&utm_campaign=spring',
      utm: { utm_source: 'google', utm_campaign: 'spring' },
    });
    expect(submission.custom).toMatchObject({ lifecyclestage: 'lead', vid: 3234574 });
  });

  it('reads the v3 shape other workflows send, properties.<name> as text', () => {
    const submission = mapped('hubspot-forms', {
      id: '39580875173',
      properties: { email: 'john.smith@example.test', firstname: 'John', lastname: 'Smith' },
      createdAt: '2024-07-04T10:32:12.000Z',
      archived: false,
    });
    expect(submission.fields).toEqual({
      email: 'john.smith@example.test',
      firstName: 'John',
      lastName: 'Smith',
    });
  });
});
