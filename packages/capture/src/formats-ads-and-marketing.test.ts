import { describe, expect, it } from 'vitest';
import { mapped } from './formats.test-helpers.js';

describe('each tool lands the standard fields its documented payload carries', () => {
  it('facebook-lead-ads: a Graph API lead (field_data) with full_name and phone_number', () => {
    // https://developers.facebook.com/docs/marketing-api/guides/lead-ads/retrieving (lead: id, created_time, field_data[].name/values)
    const lead = {
      created_time: '2015-02-28T08:49:14+0000',
      id: '<LEAD_ID>',
      ad_id: '<AD_ID>',
      form_id: '<FORM_ID>',
      field_data: [
        { name: 'car_make', values: ['Honda'] },
        { name: 'full_name', values: ['Joe Example'] },
        { name: 'email', values: ['joe@example.com'] },
        { name: 'phone_number', values: ['+15555555555'] },
      ],
    };
    const submission = mapped('facebook-lead-ads', lead);
    expect(submission.fields).toEqual({
      email: 'joe@example.com',
      phone: '+15555555555',
      firstName: 'Joe',
      lastName: 'Example',
    });
    expect(submission.custom).toMatchObject({ car_make: 'Honda', form_id: '<FORM_ID>' });
  });

  it('google-ads: user_column_data by column_id, gcl_id as the click id, google_key never kept', () => {
    // https://developers.google.com/google-ads/webhook/docs/implementation (WebhookLead, UserLeadColumnData)
    const lead = {
      lead_id: 'TeSter-123-ABCDEFGHIJKLMNOPQRSTUVWXYZ-abcdefghijklmnopqrstuvwxyz-0123456789-AaBbCcDdEeFf',
      user_column_data: [
        { column_name: 'Full Name', string_value: 'FirstName LastName', column_id: 'FULL_NAME' },
        { column_name: 'User Phone', string_value: '+16505550123', column_id: 'PHONE_NUMBER' },
        { column_name: 'User Email', string_value: 'test@example.com', column_id: 'EMAIL' },
        { column_name: 'What is your preferred dealership?', string_value: 'North', column_id: 'Q1' },
      ],
      api_version: '1.0',
      form_id: 40000000000,
      campaign_id: 50000000000,
      google_key: 'secret-key',
      is_test: true,
      gcl_id: 'gcl-id-abc',
      adgroup_id: 20000000000,
      creative_id: 30000000000,
    };
    const submission = mapped('google-ads', lead);
    expect(submission.fields).toEqual({
      phone: '+16505550123',
      email: 'test@example.com',
      firstName: 'FirstName',
      lastName: 'LastName',
    });
    expect(submission.attribution).toEqual({ clickIds: { gclid: 'gcl-id-abc' } });
    expect(JSON.stringify(submission)).not.toContain('secret-key');
    expect(submission.custom['What is your preferred dealership?']).toBe('North');
  });

  it('hubspot-forms: fields[].name/value and context.pageUri', () => {
    // https://legacydocs.hubspot.com/docs/methods/forms/submit_form (Forms API v3 submission body)
    const submission = mapped('hubspot-forms', {
      submittedAt: '1517927174000',
      fields: [
        { objectTypeId: '0-1', name: 'email', value: 'example@example.com' },
        { objectTypeId: '0-1', name: 'firstname', value: 'Jeff' },
        { objectTypeId: '0-1', name: 'lastname', value: 'Example' },
        { objectTypeId: '0-1', name: 'company', value: 'Example Inc' },
      ],
      context: { hutk: 'abc123', pageUri: 'www.example.com/page', pageName: 'Example page' },
    });
    expect(submission.fields).toEqual({
      email: 'example@example.com',
      firstName: 'Jeff',
      lastName: 'Example',
      company: 'Example Inc',
    });
    expect(submission.attribution).toEqual({ landingPage: 'www.example.com/page' });
  });

  it('linkedin: answers joined to the form questions by id, predefined fields as targets', () => {
    // https://learn.microsoft.com/en-us/linkedin/marketing/lead-sync/leadsync (leadFormResponses: formResponse.answers[].questionId/answerDetails; form content.questions[].predefinedField)
    const submission = mapped('linkedin', {
      id: 'urn:li:leadFormResponse:123',
      submittedAt: 1658340848000,
      form: {
        content: {
          questions: [
            {
              questionId: 1,
              name: 'firstName',
              predefinedField: 'FIRST_NAME',
              question: { localized: { en_US: 'First name' } },
            },
            {
              questionId: 2,
              name: 'lastName',
              predefinedField: 'LAST_NAME',
              question: { localized: { en_US: 'Last name' } },
            },
            {
              questionId: 3,
              name: 'email',
              predefinedField: 'EMAIL',
              question: { localized: { en_US: 'Email address' } },
            },
            {
              questionId: 4,
              name: 'company',
              predefinedField: 'COMPANY_NAME',
              question: { localized: { en_US: 'Company name' } },
            },
          ],
        },
      },
      formResponse: {
        answers: [
          { answerDetails: { textQuestionAnswer: { answer: 'Ada' } }, questionId: 1 },
          { answerDetails: { textQuestionAnswer: { answer: 'Lovelace' } }, questionId: 2 },
          { answerDetails: { textQuestionAnswer: { answer: 'ada@example.com' } }, questionId: 3 },
          { answerDetails: { textQuestionAnswer: { answer: 'Analytical Engines' } }, questionId: 4 },
        ],
      },
    });
    expect(submission.fields).toEqual({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      company: 'Analytical Engines',
    });
  });

  it('calendly: the invitee, questions_and_answers by question text, tracking utm', () => {
    // https://developer.calendly.com/api-docs/calendly-api/webhooks/get-sample-webhook-data (invitee.created payload)
    const submission = mapped('calendly', {
      created_at: '2020-11-23T17:51:19.000000Z',
      created_by: 'https://api.calendly.com/users/AAAAAAAAAAAAAAAA',
      event: 'invitee.created',
      payload: {
        email: 'test@example.com',
        first_name: 'John',
        last_name: 'Doe',
        name: 'John Doe',
        status: 'active',
        text_reminder_number: '+1 404-555-1234',
        timezone: 'America/New_York',
        questions_and_answers: [
          { answer: 'Acme Corp', position: 0, question: 'Company' },
          {
            answer: 'Looking for a demo',
            position: 1,
            question: 'Please share anything that will help prepare for our meeting.',
          },
        ],
        tracking: {
          utm_campaign: 'spring',
          utm_source: 'google',
          utm_medium: 'cpc',
          utm_content: null,
          utm_term: null,
          salesforce_uuid: null,
        },
      },
    });
    expect(submission.fields).toEqual({
      email: 'test@example.com',
      firstName: 'John',
      lastName: 'Doe',
      phone: '+1 404-555-1234',
      company: 'Acme Corp',
    });
    expect(submission.attribution.utm).toEqual({
      utm_campaign: 'spring',
      utm_source: 'google',
      utm_medium: 'cpc',
    });
  });

  it('mailchimp: a subscribe event posted as a form, merge fields FNAME / LNAME / PHONE', () => {
    // https://mailchimp.com/developer/marketing/guides/sync-audience-data-webhooks/ (type, fired_at, data[email], data[merges][FNAME])
    const submission = mapped('mailchimp', {
      type: 'subscribe',
      fired_at: '2009-03-26 21:35:57',
      'data[id]': '8a25ff1d98',
      'data[list_id]': 'a6b5da1054',
      'data[email]': 'api@mailchimp.com',
      'data[email_type]': 'html',
      'data[merges][EMAIL]': 'api@mailchimp.com',
      'data[merges][FNAME]': 'Mailchimp',
      'data[merges][LNAME]': 'API',
      'data[merges][INTERESTS]': 'Group1,Group2',
      'data[ip_opt]': '10.20.10.30',
      'data[ip_signup]': '10.20.10.30',
    });
    expect(submission.fields).toEqual({
      email: 'api@mailchimp.com',
      firstName: 'Mailchimp',
      lastName: 'API',
    });
  });
});
