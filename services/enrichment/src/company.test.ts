import { describe, expect, it } from 'vitest';
import { inferCompany } from './company.js';
import { verifyEmail } from './email/verify-email.js';

const company = async (given: string | null, address: string | null) =>
  inferCompany(given, await verifyEmail(address, null));

describe('inferCompany', () => {
  it('keeps the company the lead gave, with its business e-mail domain', async () => {
    expect(await company('  Initech LLC ', 'bill@mail.initech.com')).toEqual({
      name: 'Initech LLC',
      domain: 'initech.com',
      source: 'payload',
    });
    expect(await company('Initech', 'bill@gmail.com')).toEqual({
      name: 'Initech',
      domain: null,
      source: 'payload',
    });
  });

  it.each([
    ['jane@acme-corp.com', 'Acme Corp', 'acme-corp.com'],
    ['jane@mail.acme-corp.com', 'Acme Corp', 'acme-corp.com'],
    ['jane@www.globex.io', 'Globex', 'globex.io'],
    ['jane@eu.mail.umbrella.co.uk', 'Umbrella', 'umbrella.co.uk'],
    ['jane@tyrell.com.au', 'Tyrell', 'tyrell.com.au'],
    ['jane@3m.com', '3m', '3m.com'],
    ['jane@müller-bau.de', 'Müller Bau', 'xn--mller-bau-q9a.de'],
  ])('infers it from the business address %s', async (address, name, domain) => {
    expect(await company(null, address)).toEqual({ name, domain, source: 'email_domain' });
  });

  it.each([
    ['free-mail', 'jane@gmail.com'],
    ['free-mail, regional', 'jane@web.de'],
    ['disposable', 'jane@mailinator.com'],
    ['invalid', 'jane@@acme.com'],
    ['missing', null],
  ])('never infers it from a %s address', async (_kind, address) => {
    expect(await company(' ', address)).toEqual({ name: null, domain: null, source: 'none' });
  });
});
