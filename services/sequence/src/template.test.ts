import { describe, expect, it } from 'vitest';
import { renderSubject, renderTemplate, unknownPlaceholders } from './template.js';

const ada = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@analytical.example',
  company: 'Analytical Engines',
  phone: '+442079460000',
};

describe('renderTemplate', () => {
  it('puts the lead’s values in every placeholder, spaces inside the braces ignored', () => {
    expect(renderTemplate('Hi {{firstName}} {{ lastName }} of {{company}} ({{email}}, {{phone}})', ada)).toBe(
      'Hi Ada Lovelace of Analytical Engines (ada@analytical.example, +442079460000)',
    );
  });

  it('renders a missing, null or blank value as nothing, or as the default given', () => {
    const bare = { firstName: null, lastName: '  ', company: undefined };
    expect(renderTemplate('Hi {{firstName}},', bare)).toBe('Hi ,');
    expect(renderTemplate('Hi {{firstName|there}},', bare)).toBe('Hi there,');
    expect(renderTemplate('Hi {{ lastName | friend }}', bare)).toBe('Hi friend');
    expect(renderTemplate('At {{company|your company}}', bare)).toBe('At your company');
    expect(renderTemplate('Hi {{firstName|there}},', ada)).toBe('Hi Ada,');
  });

  it('inserts values as they are: a plain-text body needs no escaping, and braces in values stay', () => {
    expect(renderTemplate('{{company}}', { company: '<Acme> & {{email}}' })).toBe('<Acme> & {{email}}');
  });

  it('leaves text that is no placeholder alone', () => {
    expect(renderTemplate('a {single} brace and }} {{', ada)).toBe('a {single} brace and }} {{');
  });
});

describe('renderSubject', () => {
  it('keeps the subject on one line whatever the values hold', () => {
    expect(renderSubject('For {{company}}', { company: 'Acme\r\nBcc: x@evil.example' })).toBe(
      'For Acme Bcc: x@evil.example',
    );
  });
});

describe('unknownPlaceholders', () => {
  it('finds none in a template using the five fields, with or without defaults', () => {
    expect(unknownPlaceholders('{{firstName}} {{lastName|}} {{ email }} {{company|us}} {{phone}}')).toEqual(
      [],
    );
  });

  it('names each placeholder that is not one of the five, as written', () => {
    expect(unknownPlaceholders('Hi {{fullName}}, {{ FirstName }} {{}} {{|x}} {{firstName}}')).toEqual([
      '{{fullName}}',
      '{{ FirstName }}',
      '{{}}',
      '{{|x}}',
    ]);
  });
});
