import { describe, expect, it } from 'vitest';
import { mapped } from './formats.test-helpers.js';
import { mapSubmission } from './map-submission.js';

describe('attribution from the page URL', () => {
  it("hubspot-forms: pageUri's UTM parameters and click id fill the attribution", () => {
    const submission = mapped('hubspot-forms', {
      fields: [{ name: 'email', value: 'ada@example.com' }],
      context: {
        pageUri:
          'https://example.org/demo?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=Cj0&x=1#top',
      },
    });
    expect(submission.attribution).toEqual({
      landingPage:
        'https://example.org/demo?utm_source=google&utm_medium=cpc&utm_campaign=spring&gclid=Cj0&x=1#top',
      utm: { utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'spring' },
      clickIds: { gclid: 'Cj0' },
    });
  });

  it('unbounce and elementor: the page URL, decoded', () => {
    const unbounce = mapped('unbounce', {
      page_url: 'https://lp.example.org/offer?utm_source=news%20letter&utm_term=crm+tool',
      'data.json': JSON.stringify({ email: ['ada@example.com'] }),
    });
    expect(unbounce.attribution.utm).toEqual({ utm_source: 'news letter', utm_term: 'crm tool' });
    const elementor = mapped('elementor', {
      Email: 'ada@example.com',
      'Page URL': 'https://example.org/?fbclid=IwAR&utm_content=hero',
    });
    expect(elementor.attribution).toMatchObject({
      utm: { utm_content: 'hero' },
      clickIds: { fbclid: 'IwAR' },
    });
  });

  it("explicit fields win over the URL's, parameter by parameter", () => {
    const submission = mapped('gravity-forms', {
      '2': 'ada@example.com',
      utm_source: 'newsletter',
      gclid: 'explicit',
      source_url: 'https://example.org/?utm_source=google&utm_medium=cpc&gclid=fromurl',
    });
    expect(submission.attribution).toMatchObject({
      utm: { utm_source: 'newsletter', utm_medium: 'cpc' },
      clickIds: { gclid: 'explicit' },
    });
  });

  it('a mapped landing page works as well, with the generic format; a value past its limit is left out', () => {
    const submission = mapped(
      'generic',
      { email: 'a@x.test', page: `https://example.org/?utm_source=${'x'.repeat(300)}&utm_medium=email` },
      { page: 'landingPage' },
    );
    expect(submission.attribution.utm).toEqual({ utm_medium: 'email' });
  });
});

describe('the trace says where each value came from and the key that maps what is left', () => {
  it('origins by mapping, format, name, full name and URL; unmapped keys that work as mappings', () => {
    const payload = {
      formID: '1',
      rawRequest: JSON.stringify({
        q3_yourName: { first: 'Ada', last: 'Lovelace' },
        q4_email: 'ada@example.com',
        q5_company: 'Engines',
        q6_page: 'https://example.org/?utm_source=google',
        q7_office: { city: 'London', country: 'UK' },
      }),
    };
    const result = mapSubmission(payload, { 'rawRequest.q6_page': 'landingPage' }, 'jotform');
    if (!result.ok) throw new Error(result.error);
    expect(result.trace.origins).toEqual({
      landingPage: { key: 'rawRequest.q6_page', by: 'mapping' },
      firstName: { key: 'yourName.first', by: 'format' },
      lastName: { key: 'yourName.last', by: 'format' },
      email: { key: 'email', by: 'format' },
      company: { key: 'company', by: 'format' },
      utm_source: { key: 'rawRequest.q6_page', by: 'url' },
    });
    expect(result.trace.unmapped).toEqual([
      { key: 'office.city', customKey: 'office_city' },
      { key: 'office.country', customKey: 'office_country' },
      { key: 'formID', customKey: 'formID' },
    ]);
    // Each key shown is a key that maps (and so is the raw path beside it).
    const remapped = mapSubmission(
      payload,
      { 'office.city': 'company', 'rawRequest.q7_office.country': 'utm_content' },
      'jotform',
    );
    if (!remapped.ok) throw new Error(remapped.error);
    expect(remapped.submission.fields.company).toBe('London');
    expect(remapped.submission.attribution.utm).toEqual({ utm_content: 'UK' });
    expect(remapped.trace.unmapped.map((entry) => entry.key)).toEqual(['company', 'page', 'formID']);
  });

  it('a full name and fields named as targets', () => {
    const result = mapSubmission(
      { name: 'Ada Lovelace', email: 'a@x.test', utm_source: 'x' },
      { name: 'fullName' },
    );
    expect(result.ok && result.trace.origins).toEqual({
      email: { key: 'email', by: 'name' },
      utm_source: { key: 'utm_source', by: 'name' },
      firstName: { key: 'name', by: 'fullName' },
      lastName: { key: 'name', by: 'fullName' },
    });
  });
});
