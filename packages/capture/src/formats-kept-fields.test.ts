import { describe, expect, it } from 'vitest';
import { mapped } from './formats.test-helpers.js';

describe('every field the sender sent is kept, under a name a mapping can use', () => {
  it("typeform: a question's ref that is a common name fills its field, whatever the title", () => {
    const submission = mapped('typeform', {
      form_response: {
        definition: {
          fields: [
            { id: 'a', title: "What's your first name?", ref: 'first_name' },
            { id: 'b', title: 'And your last name, {{field:first_name}}?', ref: 'last_name' },
            { id: 'c', title: 'Where do you work?', ref: 'company' },
          ],
        },
        answers: [
          { type: 'text', text: 'Ada', field: { id: 'a', ref: 'first_name' } },
          { type: 'text', text: 'Lovelace', field: { id: 'b', ref: 'last_name' } },
          { type: 'text', text: 'Engines', field: { id: 'c', ref: 'company' } },
          { type: 'email', email: 'ada@example.com', field: { id: 'd', ref: 'x' } },
        ],
      },
    });
    expect(submission.fields).toEqual({
      firstName: 'Ada',
      lastName: 'Lovelace',
      company: 'Engines',
      email: 'ada@example.com',
    });
  });

  it("linkedin: the form's hidden fields (utm_campaign) and the campaign, form name and test flag", () => {
    // https://learn.microsoft.com/en-us/linkedin/marketing/lead-sync/lead-sync-schema (form hiddenFields[] {name, value};
    // response leadMetadata.sponsoredLeadMetadata.campaign, associatedEntity, testLead)
    const submission = mapped('linkedin', {
      id: 'urn:li:leadFormResponse:123',
      testLead: false,
      leadMetadata: { sponsoredLeadMetadata: { campaign: 'urn:li:sponsoredCampaign:42' } },
      form: {
        id: 7,
        name: 'Spring demo',
        hiddenFields: [
          { name: 'utm_campaign', value: 'spring-launch' },
          { name: 'crm_list', value: 'emea' },
        ],
        content: {
          questions: [
            { questionId: 3, predefinedField: 'EMAIL', question: { localized: { en_US: 'Email' } } },
          ],
        },
      },
      formResponse: {
        answers: [{ answerDetails: { textQuestionAnswer: { answer: 'ada@example.com' } }, questionId: 3 }],
        consentResponses: [{ accepted: true, consentId: 9 }],
      },
    });
    expect(submission.fields).toEqual({ email: 'ada@example.com' });
    expect(submission.attribution.utm).toEqual({ utm_campaign: 'spring-launch' });
    expect(submission.custom).toMatchObject({
      crm_list: 'emea',
      form_id: 7,
      form_name: 'Spring demo',
      testLead: false,
      leadMetadata: { sponsoredLeadMetadata: { campaign: 'urn:li:sponsoredCampaign:42' } },
      consentResponses: [{ accepted: true, consentId: 9 }],
    });
  });

  it('typeform: the form title, scores, landed_at and the event type', () => {
    const submission = mapped('typeform', {
      event_id: 'e1',
      event_type: 'form_response',
      form_response: {
        form_id: 'f1',
        landed_at: '2024-01-01T00:00:00Z',
        definition: { title: 'Demo request', fields: [] },
        calculated: { score: 9 },
        variables: [{ key: 'price', type: 'number', number: 120 }],
        answers: [{ type: 'email', email: 'ada@example.com', field: { id: 'x', ref: 'email' } }],
      },
    });
    expect(submission.custom).toMatchObject({
      form_title: 'Demo request',
      score: 9,
      price: 120,
      landed_at: '2024-01-01T00:00:00Z',
      event_type: 'form_response',
    });
  });

  it('hubspot-forms: the whole context and the consent, not only pageUri', () => {
    const submission = mapped('hubspot-forms', {
      fields: [{ name: 'email', value: 'ada@example.com' }],
      context: { hutk: 'abc', pageUri: 'https://example.org/demo', pageName: 'Demo', pageId: '55' },
      legalConsentOptions: { consent: { consentToProcess: true } },
    });
    expect(submission.custom).toEqual({
      hutk: 'abc',
      pageName: 'Demo',
      pageId: '55',
      legalConsentOptions: { consent: { consentToProcess: true } },
    });
  });

  it("jotform: rawRequest's entries other than answers", () => {
    const submission = mapped('jotform', {
      formID: '1',
      rawRequest: JSON.stringify({ q4_email: 'ada@example.com', event_id: 'ev-1', formID: '1' }),
    });
    expect(submission.custom).toEqual({ formID: '1', event_id: 'ev-1' });
  });

  it("webflow: the submission's page URL (with its UTM parameters) and form fields", () => {
    const submission = mapped('webflow', {
      triggerType: 'form_submission',
      payload: {
        name: 'Contact',
        formId: 'f1',
        pageUrl: 'https://example.org/contact?utm_source=linkedin',
        data: { Email: 'ada@example.com' },
        schema: [{ fieldName: 'Email', fieldType: 'FormTextInput' }],
      },
    });
    expect(submission.attribution).toEqual({
      landingPage: 'https://example.org/contact?utm_source=linkedin',
      utm: { utm_source: 'linkedin' },
    });
    expect(submission.custom).toEqual({
      form_name: 'Contact',
      form_formId: 'f1',
      triggerType: 'form_submission',
    });
  });

  it('elfsight: an item without a label is kept by its id', () => {
    const submission = mapped('elfsight', [
      { id: 'email', name: 'Email', value: 'ada@example.com' },
      { id: 'consent_1', value: 'yes' },
    ]);
    expect(submission.custom).toEqual({ consent_1: 'yes' });
  });
});
