import ipaddr from 'ipaddr.js';

/**
 * The client a per-IP limit counts: an IPv4 address as it is (an IPv4-mapped IPv6 address as its
 * IPv4), an IPv6 address by its /64 — one subscriber usually holds a whole /64, so counting single
 * IPv6 addresses would give each client 2^64 budgets. Text that is not an address is used as it is.
 */
export function rateLimitClientKey(ip: string): string {
  const text = ip.split('%', 1)[0] ?? ip;
  if (!ipaddr.isValid(text)) return ip;
  const address = ipaddr.parse(text);
  if (address.kind() === 'ipv4') return address.toString();
  const ipv6 = address as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().toString();
  const parts = ipv6.parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}
