import { describe, expect, it } from 'vitest';
import { mapped } from './formats.test-helpers.js';

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
