import type { MappingTarget, SourceFormat } from '@lead-capture/contracts';
import { describe, expect, it } from 'vitest';
import { type MappedSubmission, mapSubmission } from './map-submission.js';

function mapped(
  format: SourceFormat,
  payload: unknown,
  mappings: Record<string, MappingTarget> = {},
): MappedSubmission {
  const result = mapSubmission(payload, mappings, format);
  if (!result.ok) throw new Error(`expected a mapped submission, got: ${result.error}`);
  return result.submission;
}

describe('each tool lands the standard fields its documented payload carries', () => {
  it('typeform: answers named by question title, email and phone by answer type, hidden utm', () => {
    // Shape: https://www.typeform.com/developers/webhooks/example-payload/ (as reproduced at
    // https://actionsflow.github.io/docs/triggers/typeform and https://pastebin.com/zW0tGLEe).
    const payload = {
      event_id: '01EK4R5PFZZP6C8H14RTP4YW6C',
      event_type: 'form_response',
      form_response: {
        form_id: 'g8hcyeXS',
        token: 'x71for1wr6irs2rx71fotn12b3izh25v',
        landed_at: '2020-09-26T08:23:47Z',
        submitted_at: '2020-09-26T08:23:49Z',
        hidden: { utm_source: 'newsletter' },
        definition: {
          id: 'g8hcyeXS',
          title: 'Feedback',
          fields: [
            {
              id: 'M8JLOd0nIQPU',
              title: "What's your name?",
              type: 'short_text',
              ref: '9a48',
              properties: {},
            },
            { id: 'aScWB6tE7lKg', title: 'Your Email Address:', type: 'email', ref: '31c5', properties: {} },
            { id: 'Ph0neXXXXXXX', title: 'Best number to reach you', type: 'phone_number', ref: 'p1' },
          ],
        },
        answers: [
          {
            type: 'text',
            text: 'Ada Lovelace',
            field: { id: 'M8JLOd0nIQPU', type: 'short_text', ref: '9a48' },
          },
          {
            type: 'email',
            email: 'ada@example.com',
            field: { id: 'aScWB6tE7lKg', type: 'email', ref: '31c5' },
          },
          {
            type: 'phone_number',
            phone_number: '+447946000000',
            field: { id: 'Ph0neXXXXXXX', type: 'phone_number' },
          },
        ],
      },
    };
    const submission = mapped('typeform', payload);
    expect(submission.fields).toEqual({
      email: 'ada@example.com',
      phone: '+447946000000',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    expect(submission.attribution).toEqual({ utm: { utm_source: 'newsletter' } });
    expect(submission.custom).toMatchObject({ event_id: '01EK4R5PFZZP6C8H14RTP4YW6C', form_id: 'g8hcyeXS' });
  });

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

  it('tally: data.fields by label, email and phone by field type, choice ids as their texts', () => {
    // https://tally.so/help/webhooks (FORM_RESPONSE: data.fields[].key/label/type/value/options)
    const submission = mapped('tally', {
      eventId: 'a4cb511e-d513-4fa5-baee-b815d718dfd1',
      eventType: 'FORM_RESPONSE',
      createdAt: '2023-06-28T15:00:21.889Z',
      data: {
        responseId: '2wgx4n',
        submissionId: '2wgx4n',
        respondentId: 'dwQKYm',
        formId: 'VwbNEw',
        formName: 'Webhook payload',
        createdAt: '2023-06-28T15:00:21.000Z',
        fields: [
          { key: 'question_mVGEg3', label: 'First name', type: 'INPUT_TEXT', value: 'Alice' },
          { key: 'question_nPAxnk', label: 'Your mail', type: 'INPUT_EMAIL', value: 'alice@example.com' },
          { key: 'question_3EKz4n', label: 'Mobile', type: 'INPUT_PHONE_NUMBER', value: '+3212345678' },
          {
            key: 'question_w4Q4Xn',
            label: 'Interest',
            type: 'MULTIPLE_CHOICE',
            value: ['5c5bd0d5-a0e0-4c38-8a7d-0d1d30c9a7c6'],
            options: [{ id: '5c5bd0d5-a0e0-4c38-8a7d-0d1d30c9a7c6', text: 'Pricing' }],
          },
        ],
      },
    });
    expect(submission.fields).toEqual({
      firstName: 'Alice',
      email: 'alice@example.com',
      phone: '+3212345678',
    });
    expect(submission.custom.Interest).toBe('Pricing');
  });

  it('jotform: rawRequest (JSON text) decoded, q3_ prefixes dropped, name parts split', () => {
    // https://www.jotform.com/help/245-how-to-setup-a-webhook-with-jotform/ (multipart fields formID, submissionID, rawRequest, pretty)
    const submission = mapped('jotform', {
      formID: '213456789012345',
      submissionID: '5234567890123456789',
      formTitle: 'Contact Us',
      pretty: 'Name:Ada Lovelace, E-mail:ada@example.com',
      rawRequest: JSON.stringify({
        slug: 'submit/213456789012345/',
        q3_name: { first: 'Ada', last: 'Lovelace' },
        q4_email: 'ada@example.com',
        q5_phoneNumber: { full: '(555) 555-5555' },
        q6_message: 'Hello',
      }),
    });
    expect(submission.fields).toEqual({
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      phone: '(555) 555-5555',
    });
    expect(submission.custom).toMatchObject({ message: 'Hello', formID: '213456789012345' });
  });

  it('elementor: field labels as keys, or "advanced data" fields[id][title/value]', () => {
    // https://elementor.com/help/actions-after-submit/ (Webhook: simple labels, or fields[id][value] with Advanced Data)
    const simple = mapped('elementor', {
      Name: 'Ada Lovelace',
      Email: 'ada@example.com',
      Message: 'Hi',
      Date: 'June 1, 2024',
      'Page URL': 'https://example.org/contact',
      'Powered by': 'Elementor',
    });
    expect(simple.fields).toEqual({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    expect(simple.attribution).toEqual({ landingPage: 'https://example.org/contact' });
    const advanced = mapped('elementor', {
      'fields[name][id]': 'name',
      'fields[name][type]': 'text',
      'fields[name][title]': 'Name',
      'fields[name][value]': 'Ada Lovelace',
      'fields[email][title]': 'Email',
      'fields[email][value]': 'ada@example.com',
      'meta[page_url][title]': 'Page URL',
      'meta[page_url][value]': 'https://example.org/contact',
      'form[id]': 'a1b2c3',
      'form[name]': 'New Form',
    });
    expect(advanced.fields).toEqual({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    expect(advanced.attribution).toEqual({ landingPage: 'https://example.org/contact' });
    // The form's name and id are the lead's, not the field's description: kept, under mappable names.
    expect(advanced.custom).toEqual({ form_id: 'a1b2c3', form_name: 'New Form' });
  });

  it('gravity-forms: a Name field (.3 / .6) and source_url; other inputs by mapping', () => {
    // https://docs.gravityforms.com/entry-object/ (entry: input ids such as "1.3", "1.6", source_url)
    const submission = mapped(
      'gravity-forms',
      {
        id: '1',
        form_id: '1',
        date_created: '2024-03-01 10:00:00',
        source_url: 'https://example.org/?utm_source=x',
        '1.3': 'Ada',
        '1.6': 'Lovelace',
        '2': 'ada@example.com',
        '3': '(555) 555-5555',
      },
      { '2': 'email', '3': 'phone' },
    );
    expect(submission.fields).toEqual({
      email: 'ada@example.com',
      phone: '(555) 555-5555',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    expect(submission.attribution).toEqual({
      landingPage: 'https://example.org/?utm_source=x',
      utm: { utm_source: 'x' },
    });
  });

  it('webflow: form_submission payload.data by the form field names', () => {
    // https://developers.webflow.com/data/reference/webhooks/events/form-submission
    const submission = mapped('webflow', {
      triggerType: 'form_submission',
      payload: {
        name: 'Contact Us',
        siteId: '65427cf400e02b306eaa049c',
        data: {
          'First Name': 'Zaphod',
          'Last Name': 'Beeblebrox',
          email: 'zaphod@heartofgold.ai',
          'Phone Number': 15550000000,
        },
        submittedAt: '2022-09-14T12:35:16.117Z',
        id: '6321ca84df3949bfc6752327',
        formId: '65429eadebe8a9f3a30f62d0',
      },
    });
    expect(submission.fields).toEqual({
      firstName: 'Zaphod',
      lastName: 'Beeblebrox',
      email: 'zaphod@heartofgold.ai',
      phone: '15550000000',
    });
  });

  it('unbounce: data.json (JSON text, values in arrays) and page_url', () => {
    // https://documentation.unbounce.com/hc/en-us/articles/203510044-Using-a-Webhook (form post: data.json, data.xml, page_url, page_id, variant)
    const submission = mapped('unbounce', {
      page_id: 'a2838d8e-aa45-11e0-9cd5-00163e0a0e5b',
      page_url: 'http://unbouncepages.com/my-page/',
      variant: 'a',
      'data.json': JSON.stringify({
        first_name: ['Ada'],
        last_name: ['Lovelace'],
        email: ['ada@example.com'],
        phone_number: ['555-555-5555'],
        ip_address: ['192.0.2.1'],
      }),
      'data.xml': '<data>...</data>',
    });
    expect(submission.fields).toEqual({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: '555-555-5555',
    });
    expect(submission.attribution).toEqual({ landingPage: 'http://unbouncepages.com/my-page/' });
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

  it('zapier: flat JSON with the names a person typed', () => {
    // https://help.zapier.com/hc/en-us/articles/8496326446989 (Webhooks by Zapier POST: flat key/value data)
    const submission = mapped('zapier', {
      'Email Address': 'ada@example.com',
      Name: 'Ada Lovelace',
      'Phone Number': '555',
    });
    expect(submission.fields).toEqual({
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      phone: '555',
    });
  });

  it('elfsight: the documented sample, a top-level JSON array of {id, name, value, type}', () => {
    // https://help.elfsight.com/article/1615-using-webhooks-in-your-form-widget ("How Webhooks Work"):
    // the first two items of the page's example, verbatim (the stored copy of the page ends there).
    const submission = mapped('elfsight', [
      { id: 'm9hhh2rh', name: 'Short Text', value: 'test', type: 'shortText' },
      { id: '62ce755ce75ab', name: 'Date', value: '24.09.2025', type: 'date' },
    ]);
    expect(submission.fields).toEqual({});
    expect(submission.custom).toEqual({ 'Short Text': 'test', Date: '24.09.2025' });
  });

  it('elfsight: a contact form in the documented item shape lands name, e-mail and phone by label', () => {
    // Item shape from the page above; the labels are a contact form's, the ids and types illustrative.
    const submission = mapped('elfsight', [
      { id: 'a1', name: 'Name', value: 'Ada Lovelace', type: 'shortText' },
      { id: 'a2', name: 'Email', value: 'ada@example.com', type: 'email' },
      { id: 'a3', name: 'Phone', value: '+44 20 7946 0000', type: 'phone' },
      { id: 'a4', name: 'Message', value: 'Hi', type: 'longText' },
    ]);
    expect(submission.fields).toEqual({
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: '+44 20 7946 0000',
    });
    expect(submission.custom).toEqual({ Message: 'Hi' });
  });

  it('formstack: sub-fields packed one per line, HandshakeKey dropped', () => {
    // https://developers.formstack.com/docs/webhook-examples (URL encoded: Name = "first = John\n\nlast = Smith")
    const submission = mapped('formstack', {
      FormID: '23534',
      UniqueID: '12345678',
      Name: 'first = John\n\nlast = Smith',
      Email: 'user@example.com',
      Phone: '234-555-1234',
      Address: 'address = 123 Main St\ncity = Anytown',
      HandshakeKey: 'shared-secret',
    });
    expect(submission.fields).toEqual({
      firstName: 'John',
      lastName: 'Smith',
      email: 'user@example.com',
      phone: '234-555-1234',
    });
    expect(JSON.stringify(submission)).not.toContain('shared-secret');
  });
});

describe('mappings that survive real forms', () => {
  it('selects array items by key, whatever their order', () => {
    const payload = {
      fields: [
        { name: 'phone', value: '555' },
        { name: 'email', value: 'ada@example.com' },
      ],
    };
    const submission = mapped('generic', payload, {
      'fields[name=email].value': 'email',
      'fields[name=phone].value': 'phone',
    });
    expect(submission.fields).toEqual({ email: 'ada@example.com', phone: '555' });
    expect(submission.custom).toEqual({ fields: [{ name: 'phone' }, { name: 'email' }] });
  });

  it('selects by a nested key and by question text ignoring case', () => {
    const payload = {
      answers: [{ field: { ref: 'mail' }, email: 'ada@example.com' }],
      questions_and_answers: [{ question: 'Company Name', answer: 'Acme' }],
    };
    expect(
      mapped('generic', payload, {
        'answers[field.ref=mail].email': 'email',
        'questions_and_answers[question=company name].answer': 'company',
      }).fields,
    ).toEqual({ email: 'ada@example.com', company: 'Acme' });
  });

  it('reads into a JSON string field; the field stays in custom as sent', () => {
    const payload = { rawRequest: '{"q4_email":"ada@example.com","q6":"hi"}' };
    const submission = mapped('generic', payload, { 'rawRequest.q4_email': 'email' });
    expect(submission.fields).toEqual({ email: 'ada@example.com' });
    expect(submission.custom).toEqual(payload);
  });

  it('splits a full name; an explicit first or last name wins', () => {
    expect(mapped('generic', { Name: 'Lovelace, Ada' }, { Name: 'fullName' }).fields).toEqual({
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    expect(mapped('generic', { n: 'Ada Lovelace', lastName: 'King' }, { n: 'fullName' }).fields).toEqual({
      lastName: 'King',
      firstName: 'Ada',
    });
  });

  it('maps onto attribution: utm, referrer, landing page, click ids', () => {
    const submission = mapped(
      'generic',
      {
        email: 'a@b.c',
        src: 'google',
        ref: 'https://g.co',
        page: 'https://example.org/lp',
        click: 'Cj0K',
        fb: 'IwAR',
      },
      { src: 'utm_source', ref: 'referrer', page: 'landingPage', click: 'gclid', fb: 'fbclid' },
    );
    expect(submission.attribution).toEqual({
      utm: { utm_source: 'google' },
      referrer: 'https://g.co',
      landingPage: 'https://example.org/lp',
      clickIds: { gclid: 'Cj0K', fbclid: 'IwAR' },
    });
    expect(submission.custom).toEqual({});
  });

  it('a source mapping wins over what the format suggests', () => {
    const submission = mapped(
      'zapier',
      { Email: 'old@example.com', 'Work Email': 'new@example.com' },
      { 'Work Email': 'email' },
    );
    expect(submission.fields).toEqual({ email: 'new@example.com' });
    expect(submission.custom).toEqual({ Email: 'old@example.com' });
  });

  it('a top-level array is refused by the generic format and by formats that expect an object', () => {
    for (const format of ['generic', 'typeform'] as const) {
      expect(mapSubmission([{ name: 'Email', value: 'a@b.c' }], {}, format)).toEqual({
        ok: false,
        error: 'Payload must be a JSON object',
      });
    }
  });
});

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

describe('a mapping names a field by its flat name or by its path in the raw payload', () => {
  const jotform = {
    formID: '213456789012345',
    rawRequest: JSON.stringify({ q4_email: 'ada@example.com', q7_workEmail: 'ada@work.example' }),
  };

  it("a raw path works once a format is set (the README's rawRequest.q4_email)", () => {
    const byRaw = mapped('jotform', jotform, { 'rawRequest.q7_workEmail': 'email' });
    expect(byRaw.fields).toEqual({ email: 'ada@work.example' });
    // The flat field read from that path is taken with it, not kept twice; the other stays.
    expect(byRaw.custom).toEqual({ formID: '213456789012345', email: 'ada@example.com' });
    const byFlat = mapped('jotform', jotform, { workEmail: 'email' });
    expect(byFlat.fields).toEqual({ email: 'ada@work.example' });
    expect(byFlat.custom).toEqual(byRaw.custom);
  });

  it("raw paths with selectors into a tool's arrays (HubSpot fields[name=...])", () => {
    const submission = mapped(
      'hubspot-forms',
      {
        fields: [
          { name: 'email', value: 'a@x.test' },
          { name: 'mobilephone', value: '+1 555' },
        ],
      },
      { 'fields[name=mobilephone].value': 'phone' },
    );
    expect(submission.fields).toEqual({ email: 'a@x.test', phone: '+1 555' });
    expect(submission.custom).toEqual({});
  });

  it('a raw path into part of an object a format keeps whole takes only that part', () => {
    const submission = mapped(
      'facebook-lead-ads',
      {
        field_data: [{ name: 'email', values: ['a@x.test'] }],
        extra: { rep: 'Grace', region: 'EMEA' },
      },
      { 'extra.rep': 'company' },
    );
    expect(submission.fields).toEqual({ email: 'a@x.test', company: 'Grace' });
    expect(submission.custom).toEqual({ extra: { region: 'EMEA' } });
  });
});

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

describe('nameSplit', () => {
  const lead = { field_data: [{ name: 'full_name', values: ['Tomás Herrera Vidal'] }] };

  it.each([
    [undefined, { firstName: 'Tomás', lastName: 'Herrera Vidal' }],
    ['first-word', { firstName: 'Tomás', lastName: 'Herrera Vidal' }],
    ['last-word', { firstName: 'Tomás Herrera', lastName: 'Vidal' }],
    ['as-is', { firstName: 'Tomás Herrera Vidal' }],
  ] as const)('%s: %j', (nameSplit, fields) => {
    const result = mapSubmission(
      lead,
      {},
      { format: 'facebook-lead-ads', ...(nameSplit ? { nameSplit } : {}) },
    );
    expect(result.ok && result.submission.fields).toEqual(fields);
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
