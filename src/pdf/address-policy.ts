// Owns the rule of which network addresses a PDF url fetch may reach: public unicast only. Loopback,
// private, link-local, shared (CGNAT), unique-local, multicast, unspecified, reserved and every IPv6
// form that embeds or tunnels an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) are refused.
import ipaddr from 'ipaddr.js';

/** Why the address is refused, or null when it is public. */
export function refusalOf(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'is not an IP address';
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    // ::a.b.c.d (IPv4-compatible, deprecated) is not named by ipaddr.js in every version: refuse it here.
    if (v6.parts.slice(0, 6).every((p) => p === 0)) return 'embeds an IPv4 address (IPv4-compatible)';
  }
  const range = parsed.range();
  return range === 'unicast' ? null : `is in the ${range} range`;
}

/**
 * Hostnames a URL parser leaves alone but some resolvers read as numbers (e.g. "0x7f.1", "017700000001"
 * once the WHATWG parser has normalised most forms): any all-numeric or hex-dotted name is treated as an
 * address literal and must parse as one.
 */
export function looksNumeric(hostname: string): boolean {
  return /^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+))*\.?$/i.test(hostname);
}
