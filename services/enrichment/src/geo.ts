import type { LeadSnapshot } from '@lead-capture/contracts';
import geoip from 'geoip-country';
import ipaddr from 'ipaddr.js';
import { parsePhoneNumberFromString } from 'libphonenumber-js';

/** Where the country came from, in the order they are tried. */
export type GeoSource = 'payload_ip' | 'request_ip' | 'phone' | 'none';

/** The `geo` part of `lead.enriched`. */
export type GeoEnrichment = {
  /** ISO 3166-1 alpha-2, e.g. `DE`; null when unknown. */
  country: string | null;
  /** English name, e.g. `Germany`. */
  countryName: string | null;
  source: GeoSource;
  /** The IP address that was located (normalised); null unless the source is an IP. */
  ip: string | null;
};

/** Custom (payload) fields that may carry the visitor's IP address, matched without regard to case. */
const PAYLOAD_IP_FIELDS: readonly string[] = ['ip', 'ipAddress', 'ip_address', 'clientIp', 'client_ip'];
const PAYLOAD_IP_KEYS = new Set(PAYLOAD_IP_FIELDS.map((field) => field.toLowerCase()));

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/**
 * The lead's country: from an IP address in its payload, else from the IP the submission came from,
 * else from its phone number's country code. Only public unicast addresses are located (a private,
 * loopback, link-local, CGNAT or reserved address says nothing about a place). The GeoIP data is
 * MaxMind's GeoLite2 country database, shipped inside the geoip-country package: no download.
 */
export function locateLead(lead: Pick<LeadSnapshot, 'custom' | 'client' | 'phone'>): GeoEnrichment {
  for (const candidate of payloadIps(lead.custom)) {
    const fromPayload = locateIp(candidate, 'payload_ip');
    if (fromPayload) return fromPayload;
  }
  const fromRequest = lead.client.ip ? locateIp(lead.client.ip, 'request_ip') : null;
  if (fromRequest) return fromRequest;
  const phoneCountry = countryOfPhone(lead.phone);
  if (phoneCountry) return located(phoneCountry, 'phone', null);
  return { country: null, countryName: null, source: 'none', ip: null };
}

function payloadIps(custom: Record<string, unknown>): string[] {
  return Object.entries(custom)
    .filter(([key, value]) => PAYLOAD_IP_KEYS.has(key.toLowerCase()) && typeof value === 'string')
    .map(([, value]) => (value as string).trim());
}

function locateIp(raw: string, source: 'payload_ip' | 'request_ip'): GeoEnrichment | null {
  const ip = publicIp(raw);
  if (!ip) return null;
  const country = geoip.lookup(ip)?.country;
  return country ? located(country, source, ip) : null;
}

/** The address in canonical form when it is a public unicast one (IPv4-mapped IPv6 taken as IPv4). */
export function publicIp(raw: string): string | null {
  const text = raw.trim();
  // Only dotted-quad IPv4: ipaddr.js would also take inet_aton forms such as `1` or `0x7f.1`.
  if (!ipaddr.IPv4.isValidFourPartDecimal(text) && !ipaddr.IPv6.isValid(text)) return null;
  const address = ipaddr.process(text);
  return address.range() === 'unicast' ? address.toString() : null;
}

function countryOfPhone(phone: string | null): string | null {
  if (!phone) return null;
  const parsed = parsePhoneNumberFromString(phone);
  return parsed?.isValid() && parsed.country ? parsed.country : null;
}

function located(country: string, source: GeoSource, ip: string | null): GeoEnrichment {
  return { country, countryName: regionNames.of(country) ?? null, source, ip };
}
