// Which IP addresses an outbound fetch must never reach (SSRF): the special-use ranges of RFC 6890 and the IANA
// special-purpose registries, and the IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64).
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
  let groups = text.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(groups);
  if (dotted) {
    const value = v4(dotted[1]!);
    groups = `${groups.slice(0, -dotted[1]!.length)}${(value >> 16n).toString(16)}:${(value & 0xffffn).toString(16)}`;
  }
  const [head, tail] = groups.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const words =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return words.reduce((value, word) => (value << 16n) | BigInt(parseInt(word, 16)), 0n);
}

const v6 = (text: string): bigint => parseIpv6(text);

// RFC 6890 §2.2.3 and the IANA IPv6 special-purpose registry. Ranges that embed an IPv4 address are handled apart.
const IPV6: readonly Range[] = [
  [v6('::1'), 128, 'loopback'],
  [v6('::'), 128, 'unspecified'],
  [v6('::'), 96, 'reserved'], // IPv4-compatible (deprecated)
  [v6('64:ff9b:1::'), 48, 'reserved'], // local-use NAT64
  [v6('100::'), 64, 'reserved'], // discard-only
  [v6('2001::'), 23, 'reserved'], // IETF protocol assignments, Teredo among them
  [v6('2001:db8::'), 32, 'documentation'],
  [v6('2002::'), 16, 'reserved'], // 6to4
  [v6('3fff::'), 20, 'documentation'],
  [v6('5f00::'), 16, 'reserved'], // SRv6 SIDs
  [v6('fc00::'), 7, 'private'], // unique local
  [v6('fe80::'), 10, 'link-local'],
  [v6('fec0::'), 10, 'reserved'], // site-local (deprecated)
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
  return IPV6.find((range) => inRange(value, 128, range))?.[2];
}
