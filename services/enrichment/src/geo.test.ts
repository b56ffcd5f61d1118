import { describe, expect, it } from 'vitest';
import { locateLead, publicIp } from './geo.js';

/** Google DNS (US), Deutsche Telekom (DE), a UK address of MaxMind's own test data. */
const US_IP = '8.8.8.8';
const DE_IP = '2003::1';
const GB_IP = '81.2.69.142';

const lead = (overrides: Partial<Parameters<typeof locateLead>[0]> = {}) => ({
  custom: {},
  client: {},
  phone: null,
  ...overrides,
});

describe('locateLead', () => {
  it('takes the IP address of the payload first', () => {
    expect(locateLead(lead({ custom: { ip: US_IP }, client: { ip: GB_IP }, phone: '+4930901820' }))).toEqual({
      country: 'US',
      countryName: 'United States',
      source: 'payload_ip',
      ip: US_IP,
    });
  });

  it.each(['ip', 'ipAddress', 'ip_address', 'clientIp', 'client_ip', 'IP', 'IpAddress'])(
    'reads the payload field %s',
    (field) => {
      expect(locateLead(lead({ custom: { [field]: ` ${GB_IP} ` } }))).toMatchObject({
        country: 'GB',
        source: 'payload_ip',
        ip: GB_IP,
      });
    },
  );

  it('locates IPv6 and IPv4-mapped IPv6 addresses', () => {
    expect(locateLead(lead({ custom: { ip: DE_IP } }))).toMatchObject({
      country: 'DE',
      countryName: 'Germany',
    });
    expect(locateLead(lead({ client: { ip: `::ffff:${US_IP}` } }))).toEqual({
      country: 'US',
      countryName: 'United States',
      source: 'request_ip',
      ip: US_IP,
    });
  });

  it('passes over a private payload address to the request address', () => {
    expect(locateLead(lead({ custom: { ip: '10.1.2.3' }, client: { ip: GB_IP } }))).toMatchObject({
      country: 'GB',
      source: 'request_ip',
      ip: GB_IP,
    });
  });

  it('falls back to the phone number when no address is public', () => {
    expect(locateLead(lead({ client: { ip: '192.168.1.20' }, phone: '+49 30 901820' }))).toEqual({
      country: 'DE',
      countryName: 'Germany',
      source: 'phone',
      ip: null,
    });
  });

  it('knows nothing without a public address or a valid international number', () => {
    const none = { country: null, countryName: null, source: 'none', ip: null };
    expect(locateLead(lead({ client: { ip: '127.0.0.1' }, phone: '030 901820' }))).toEqual(none);
    expect(locateLead(lead({ custom: { ip: 42 }, phone: '+1 555' }))).toEqual(none);
    expect(locateLead(lead())).toEqual(none);
  });
});

describe('publicIp', () => {
  it.each([
    ['10.0.0.1'],
    ['172.16.5.4'],
    ['192.168.0.1'],
    ['127.0.0.1'],
    ['169.254.10.10'],
    ['100.64.0.1'],
    ['0.0.0.0'],
    ['255.255.255.255'],
    ['224.0.0.1'],
    ['192.0.2.1'],
    ['::1'],
    ['fe80::1'],
    ['fd00::1'],
    ['2001:db8::1'],
    ['::ffff:10.0.0.1'],
    ['1'],
    ['0x7f.1'],
    ['8.8.8'],
    ['not an ip'],
    [''],
  ])('refuses %s', (raw) => {
    expect(publicIp(raw)).toBeNull();
  });

  it.each([
    ['8.8.8.8', '8.8.8.8'],
    [' 81.2.69.142 ', '81.2.69.142'],
    ['2003:0000::0001', '2003::1'],
    ['::ffff:8.8.8.8', '8.8.8.8'],
  ])('accepts %s as %s', (raw, normalised) => {
    expect(publicIp(raw)).toBe(normalised);
  });
});
