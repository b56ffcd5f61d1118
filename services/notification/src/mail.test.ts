import { SAMPLE_IDS } from '@lead-capture/contracts/samples';
import { describe, expect, it } from 'vitest';
import { leadSnapshot } from '../test/harness.js';
import { renderNotificationMail } from './mail.js';

const leadId = SAMPLE_IDS.lead;
const lead = leadSnapshot();
const scored = {
  leadId,
  lead,
  score: 91,
  qualification: 'hot' as const,
  reasons: [
    { points: 40, label: 'Business e-mail' },
    { points: -5, label: 'No job title' },
  ],
};

describe('renderNotificationMail', () => {
  it('names the lead, its company and score in the subject', () => {
    expect(renderNotificationMail(scored, 'https://crm.example.com').subject).toBe(
      'Hot lead: Ada Lovelace (Analytical Engines), score 91',
    );
  });

  it('lists who it is, how to reach them, the score with its reasons, the source and the link', () => {
    const { text } = renderNotificationMail(scored, 'https://crm.example.com/');
    expect(text).toBe(
      [
        'A new hot lead scored 91 / 100.',
        '',
        'Name:     Ada Lovelace',
        'Company:  Analytical Engines',
        'E-mail:   ada@analytical.example',
        'Phone:    +442079460000',
        'Score:    91 / 100 (hot)',
        'Source:   Website form',
        '',
        'Why this score:',
        '   +40  Business e-mail',
        '    -5  No job title',
        '',
        `Open the lead: https://crm.example.com/leads/${leadId}`,
        '',
      ].join('\n'),
    );
  });

  it('says why there is no link when PUBLIC_BASE_URL is unset, instead of inventing a host', () => {
    const { text, html } = renderNotificationMail(scored, undefined);
    expect(text).toContain(`Lead id: ${leadId}.`);
    expect(text).toContain('no direct link: PUBLIC_BASE_URL is not configured');
    expect(text).not.toContain('http');
    expect(html).not.toContain('<a ');
  });

  it('says "not given" for missing values and falls back to the e-mail, then a placeholder, for the name', () => {
    const bare = { ...lead, firstName: null, lastName: null, company: null, phone: null };
    const byEmail = renderNotificationMail({ ...scored, lead: bare, reasons: [] }, undefined);
    expect(byEmail.subject).toBe('Hot lead: ada@analytical.example, score 91');
    expect(byEmail.text).toContain('Company:  not given');
    expect(byEmail.text).toContain('Phone:    not given');
    expect(byEmail.text).toContain('(no reasons given)');
    const anonymous = renderNotificationMail({ ...scored, lead: { ...bare, email: null } }, undefined);
    expect(anonymous.subject).toBe('Hot lead: Unnamed lead, score 91');
    expect(anonymous.text).toContain('E-mail:   not given');
  });

  it('escapes lead values in the HTML part and keeps the subject on one line', () => {
    const hostile = {
      ...lead,
      firstName: '<script>alert(1)</script>',
      company: 'Acme\r\nBcc: x@evil.example',
    };
    const { subject, html } = renderNotificationMail({ ...scored, lead: hostile }, 'https://crm.example.com');
    expect(subject).not.toMatch(/[\r\n]/);
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain(`<a href="https://crm.example.com/leads/${leadId}">Open the lead</a>`);
  });
});
