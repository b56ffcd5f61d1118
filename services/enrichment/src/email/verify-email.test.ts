import { describe, expect, it } from 'vitest';
import type { MailHostLookup, MailHostStatus } from './mail-dns.js';
import { verifyEmail } from './verify-email.js';

const answering =
  (status: MailHostStatus): MailHostLookup =>
  async () =>
    status;

describe('verifyEmail', () => {
  it('describes a business address whose domain has mail servers', async () => {
    expect(await verifyEmail('jane@acme-corp.com', answering('found'))).toEqual({
      address: 'jane@acme-corp.com',
      valid: true,
      problem: null,
      domain: 'acme-corp.com',
      disposable: false,
      freeProvider: false,
      role: false,
      mx: 'found',
      deliverable: 'yes',
    });
  });

  it.each([
    ['gmail.com', false, true],
    ['web.de', false, true],
    ['googlemail.com', false, true],
    ['mailinator.com', true, false],
    ['guerrillamail.com', true, false],
    ['yopmail.com', true, false],
    ['acme.com', false, false],
  ])('classifies the domain %s (disposable %s, free-mail %s)', async (domain, disposable, freeProvider) => {
    const result = await verifyEmail(`someone@${domain}`, null);
    expect(result).toMatchObject({ valid: true, domain, disposable, freeProvider });
  });

  it('recognises a disposable domain behind a subdomain', async () => {
    expect(await verifyEmail('x@inbox.mailinator.com', null)).toMatchObject({ disposable: true });
  });

  it.each([
    ['info@acme.com', true],
    ['Sales@acme.com', true],
    ['noreply@acme.com', true],
    ['no-reply@acme.com', true],
    ['support+tickets@acme.com', true],
    ['hello@acme.com', true],
    ['jane@acme.com', false],
    ['information@acme.com', false],
    ['sales.jane@acme.com', false],
  ])('role address %s: %s', async (address, role) => {
    expect((await verifyEmail(address, null)).role).toBe(role);
  });

  it.each([
    ['found', 'yes'],
    ['implicit', 'yes'],
    ['none', 'no'],
    ['unknown', 'unknown'],
  ] as const)('mail hosts %s: deliverable %s', async (mx, deliverable) => {
    expect(await verifyEmail('jane@acme.com', answering(mx))).toMatchObject({ mx, deliverable });
  });

  it('reports deliverability as unknown when lookups are off', async () => {
    expect(await verifyEmail('jane@acme.com', null)).toMatchObject({ mx: 'unknown', deliverable: 'unknown' });
  });

  it('never looks up an invalid or missing address', async () => {
    const looked: string[] = [];
    const lookup: MailHostLookup = async (domain) => {
      looked.push(domain);
      return 'found';
    };
    expect(await verifyEmail('jane@@acme.com', lookup)).toEqual({
      address: 'jane@@acme.com',
      valid: false,
      problem: 'local_part',
      domain: null,
      disposable: false,
      freeProvider: false,
      role: false,
      mx: 'unknown',
      deliverable: 'no',
    });
    expect(await verifyEmail(null, lookup)).toMatchObject({
      address: null,
      valid: false,
      problem: 'missing',
    });
    expect(looked).toEqual([]);
  });
});
