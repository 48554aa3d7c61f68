// Which IP addresses an outbound fetch must never reach (SSRF): in IPv4 the special-use ranges of RFC 6890 and the
// IANA special-purpose registry; in IPv6 everything but global unicast, less the special ranges inside it; and the
// IPv6 forms that carry an IPv4 address (mapped, NAT64) judged by that address.
import { isIP } from 'node:net';

/** Why an address is refused, in words an error message can use; `loopback` alone may be allowed for tests. */
export type SpecialUse =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (CGNAT)'
  | 'multicast'
  | 'unspecified'
  | 'reserved'
  | 'documentation'
  | 'benchmarking';

type Range = [prefix: bigint, bits: number, use: SpecialUse];

const v4 = (text: string): bigint =>
  text.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);

// RFC 6890 §2.2.2 and the IANA IPv4 special-purpose registry (the ranges not globally reachable).
const IPV4: readonly Range[] = [
  // Stryker disable next-line StringLiteral: equivalent, v4('') is 0 too (Number('') is 0)
  [v4('0.0.0.0'), 8, 'unspecified'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'shared (CGNAT)'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link-local'], // includes 169.254.169.254, the cloud metadata service
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'reserved'],
  [v4('192.0.2.0'), 24, 'documentation'],
  [v4('192.88.99.0'), 24, 'reserved'], // deprecated 6to4 relay anycast
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'benchmarking'],
  [v4('198.51.100.0'), 24, 'documentation'],
  [v4('203.0.113.0'), 24, 'documentation'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved'], // includes 255.255.255.255
];

/** Parses an IPv6 address (with an optional embedded dotted IPv4 tail) into a 128-bit number. */
function parseIpv6(text: string): bigint {
  // Stryker disable next-line MethodExpression: equivalent, parseInt reads hex digits in either case
  let groups = text.toLowerCase().split('%')[0]!;
  // Stryker disable next-line Regex: equivalent, isIP admits a dotted IPv4 part only at the end (the zone is cut off)
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(groups);
  if (dotted) {
    const value = v4(dotted[1]!);
    groups = `${groups.slice(0, -dotted[1]!.length)}${(value >> 16n).toString(16)}:${(value & 0xffffn).toString(16)}`;
  }
  const [head, tail] = groups.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const words =
    // Stryker disable next-line ConditionalExpression: equivalent, without "::" there are eight groups: nothing to fill
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return words.reduce((value, word) => (value << 16n) | BigInt(parseInt(word, 16)), 0n);
}

const v6 = (text: string): bigint => parseIpv6(text);

// IPv6 is judged by what is allowed, not by what is denied: only global unicast (2000::/3, RFC 4291 §2.4 and the
// IANA IPv6 address space registry) is ever fetched from, less the ranges inside it that the IANA IPv6
// special-purpose registry (RFC 6890 §2.2.3 and its updates) does not mark globally reachable. Anything else, named
// or not (::ffff:0:0:0/96 SIIT, 100::/64 discard, 5f00::/16 SRv6, 1::1, 4000::1...), is refused; the ranges listed
// outside 2000::/3 are there only so that the log names them precisely.
// Stryker disable next-line StringLiteral: equivalent, only the prefix of this range is read, never its use
const GLOBAL_UNICAST: Range = [v6('2000::'), 3, 'reserved'];

const IPV6: readonly Range[] = [
  // Inside 2000::/3. The registry marks a few anycast and overlay blocks within 2001::/23 globally reachable
  // (2001:1::1-3, 2001:3::/32, 2001:4:112::/48, 2001:20::/28, 2001:30::/28); none serves a web document, so the
  // whole block stays refused, Teredo (2001::/32) and benchmarking (2001:2::/48) with it.
  [v6('2001::'), 23, 'reserved'],
  [v6('2001:db8::'), 32, 'documentation'],
  [v6('2002::'), 16, 'reserved'], // 6to4: carries an IPv4 address of any kind
  [v6('3fff::'), 20, 'documentation'], // RFC 9637
  // Outside 2000::/3 (refused anyway), for the words.
  [v6('::1'), 128, 'loopback'],
  // Stryker disable next-line StringLiteral: equivalent, v6('') is 0 too, as '::' is
  [v6('::'), 128, 'unspecified'],
  [v6('fc00::'), 7, 'private'], // unique local
  [v6('fe80::'), 10, 'link-local'],
  [v6('ff00::'), 8, 'multicast'],
];

/** IPv6 prefixes whose last 32 bits are an IPv4 address that decides: IPv4-mapped, and NAT64's well-known prefix. */
const EMBEDS_IPV4: ReadonlyArray<[bigint, number]> = [
  [v6('::ffff:0:0'), 96],
  [v6('64:ff9b::'), 96],
];

function inRange(value: bigint, width: number, [prefix, bits]: [bigint, number, ...unknown[]]): boolean {
  const shift = BigInt(width - bits);
  return value >> shift === prefix >> shift;
}

function classifyIpv4(value: bigint): SpecialUse | undefined {
  return IPV4.find((range) => inRange(value, 32, range))?.[2];
}

/**
 * The special use of an IP address, or undefined for a globally reachable one. Anything that is not a valid IP
 * address is `reserved`, so a caller can never mistake a malformed answer for a public address.
 */
export function specialUseOf(address: string): SpecialUse | undefined {
  const text = address.replace(/^\[|\]$/g, '');
  const family = isIP(text);
  if (family === 4) return classifyIpv4(v4(text));
  if (family !== 6) return 'reserved';
  const value = parseIpv6(text);
  if (EMBEDS_IPV4.some((range) => inRange(value, 128, range))) return classifyIpv4(value & 0xffffffffn);
  const named = IPV6.find((range) => inRange(value, 128, range))?.[2];
  if (named) return named;
  return inRange(value, 128, GLOBAL_UNICAST) ? undefined : 'reserved';
}
