// The edges of the SSRF address table: for every range, its first and last address and the addresses just outside
// it, so that a prefix length off by one (a /15 read as /16, a /20 as /19) lets no internal address through and
// refuses no public neighbour. Also the spellings an attacker may choose for one address (capitals, a zone, brackets,
// an embedded dotted IPv4 tail, "::" anywhere), each judged as the address it spells.
import { specialUseOf } from '../../../lib/outbound/special-addresses';

const PUBLIC = undefined;

describe('IPv4 ranges, edge to edge', () => {
  test.each([
    ['0.0.0.0/8', ['0.255.255.255', 'unspecified'], ['1.0.0.0', PUBLIC]],
    [
      '10.0.0.0/8',
      ['9.255.255.255', PUBLIC],
      ['10.0.0.0', 'private'],
      ['10.255.255.255', 'private'],
      ['11.0.0.0', PUBLIC],
    ],
    [
      '100.64.0.0/10',
      ['100.63.255.255', PUBLIC],
      ['100.64.0.0', 'shared (CGNAT)'],
      ['100.127.255.255', 'shared (CGNAT)'],
      ['100.128.0.0', PUBLIC],
    ],
    [
      '127.0.0.0/8',
      ['126.255.255.255', PUBLIC],
      ['127.0.0.0', 'loopback'],
      ['127.255.255.255', 'loopback'],
      ['128.0.0.0', PUBLIC],
    ],
    [
      '169.254.0.0/16 (cloud metadata)',
      ['169.253.255.255', PUBLIC],
      ['169.254.0.0', 'link-local'],
      ['169.254.255.255', 'link-local'],
      ['169.255.0.0', PUBLIC],
    ],
    [
      '172.16.0.0/12',
      ['172.15.255.255', PUBLIC],
      ['172.16.0.0', 'private'],
      ['172.31.255.255', 'private'],
      ['172.32.0.0', PUBLIC],
    ],
    [
      '192.0.0.0/24',
      ['191.255.255.255', PUBLIC],
      ['192.0.0.0', 'reserved'],
      ['192.0.0.255', 'reserved'],
      ['192.0.1.0', PUBLIC],
    ],
    [
      '192.0.2.0/24',
      ['192.0.1.255', PUBLIC],
      ['192.0.2.0', 'documentation'],
      ['192.0.2.255', 'documentation'],
      ['192.0.3.0', PUBLIC],
    ],
    [
      '192.88.99.0/24',
      ['192.88.98.255', PUBLIC],
      ['192.88.99.0', 'reserved'],
      ['192.88.99.255', 'reserved'],
      ['192.88.100.0', PUBLIC],
    ],
    [
      '192.168.0.0/16',
      ['192.167.255.255', PUBLIC],
      ['192.168.0.0', 'private'],
      ['192.168.255.255', 'private'],
      ['192.169.0.0', PUBLIC],
    ],
    [
      '198.18.0.0/15',
      ['198.17.255.255', PUBLIC],
      ['198.18.0.0', 'benchmarking'],
      ['198.19.255.255', 'benchmarking'],
      ['198.20.0.0', PUBLIC],
    ],
    [
      '198.51.100.0/24',
      ['198.51.99.255', PUBLIC],
      ['198.51.100.0', 'documentation'],
      ['198.51.100.255', 'documentation'],
      ['198.51.101.0', PUBLIC],
    ],
    [
      '203.0.113.0/24',
      ['203.0.112.255', PUBLIC],
      ['203.0.113.0', 'documentation'],
      ['203.0.113.255', 'documentation'],
      ['203.0.114.0', PUBLIC],
    ],
    [
      '224.0.0.0/4',
      ['223.255.255.255', PUBLIC],
      ['224.0.0.0', 'multicast'],
      ['239.255.255.255', 'multicast'],
    ],
    ['240.0.0.0/4', ['240.0.0.0', 'reserved'], ['255.255.255.255', 'reserved']],
  ] as [string, ...[string, string | undefined][]][])('%s', (_range, ...cases) => {
    for (const [address, use] of cases) expect([address, specialUseOf(address)]).toEqual([address, use]);
  });
});

const ONES = 'ffff:ffff:ffff:ffff:ffff:ffff';

describe('IPv6 ranges, edge to edge', () => {
  test.each([
    [
      '2000::/3 (global unicast)',
      [`1fff:ffff:${ONES}`, 'reserved'],
      ['2000::', PUBLIC],
      [`3fff:ffff:${ONES}`, PUBLIC],
      ['4000::', 'reserved'],
    ],
    [
      '2001::/23',
      [`2000:ffff:${ONES}`, PUBLIC],
      ['2001::', 'reserved'],
      [`2001:1ff:${ONES}`, 'reserved'],
      ['2001:200::', PUBLIC],
    ],
    [
      '2001:db8::/32',
      [`2001:db7:${ONES}`, PUBLIC],
      ['2001:db8::', 'documentation'],
      [`2001:db8:${ONES}`, 'documentation'],
      ['2001:db9::', PUBLIC],
    ],
    [
      '2002::/16 (6to4)',
      [`2001:ffff:${ONES}`, PUBLIC],
      ['2002::', 'reserved'],
      [`2002:ffff:${ONES}`, 'reserved'],
      ['2003::', PUBLIC],
    ],
    [
      '3fff::/20',
      [`3ffe:ffff:${ONES}`, PUBLIC],
      ['3fff::', 'documentation'],
      [`3fff:fff:${ONES}`, 'documentation'],
      ['3fff:1000::', PUBLIC],
    ],
    [
      '::/128 and ::1/128',
      ['::', 'unspecified'],
      ['::1', 'loopback'],
      ['::2', 'reserved'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
    ],
    [
      'fc00::/7',
      [`fbff:ffff:${ONES}`, 'reserved'],
      ['fc00::', 'private'],
      [`fdff:ffff:${ONES}`, 'private'],
      ['fe00::', 'reserved'],
    ],
    [
      'fe80::/10',
      [`fe7f:ffff:${ONES}`, 'reserved'],
      ['fe80::', 'link-local'],
      [`febf:ffff:${ONES}`, 'link-local'],
      ['fec0::', 'reserved'],
    ],
    [
      'ff00::/8',
      [`feff:ffff:${ONES}`, 'reserved'],
      ['ff00::', 'multicast'],
      [`ffff:ffff:${ONES}`, 'multicast'],
    ],
    [
      '::ffff:0:0/96 (IPv4-mapped), judged by its IPv4 address',
      ['::fffe:ffff:ffff', 'reserved'],
      ['::ffff:0.0.0.0', 'unspecified'],
      ['::ffff:1.0.0.0', PUBLIC],
      ['::ffff:255.255.255.255', 'reserved'],
      ['::1:0:0:0', 'reserved'],
    ],
    [
      '64:ff9b::/96 (NAT64), judged by its IPv4 address',
      [`64:ff9a:${ONES}`, 'reserved'],
      ['64:ff9b::', 'unspecified'],
      ['64:ff9b::1.0.0.0', PUBLIC],
      ['64:ff9b::ffff:ffff', 'reserved'],
      ['64:ff9b::1:0:0', 'reserved'],
    ],
  ] as [string, ...[string, string | undefined][]][])('%s', (_range, ...cases) => {
    for (const [address, use] of cases) expect([address, specialUseOf(address)]).toEqual([address, use]);
  });
});

describe('one address, many spellings: each judged as the address it spells', () => {
  test.each([
    ['capitals', 'FE80::1', 'link-local'],
    ['capitals in a mapped address', '::FFFF:A9FE:A9FE', 'link-local'],
    ['a zone on a public address', '2606:4700::1111%eth0', PUBLIC],
    ['a zone on a link-local address', 'fe80::a%25', 'link-local'],
    ['brackets', '[fe80::1]', 'link-local'],
    ['brackets around a mapped address', '[::ffff:10.0.0.1]', 'private'],
    ['brackets around IPv4 (not a URL host form, still judged)', '[10.0.0.1]', 'private'],
    ['an opening bracket only', '[::1', 'loopback'],
    ['a bracket inside', '::[1', 'reserved'],
    ['a closing bracket in the middle of a public address', '[2606:4700::]1111', 'reserved'],
    ['no "::", eight groups', '2606:4700:0:0:0:0:0:1111', PUBLIC],
    ['"::" at the end', 'fe80::', 'link-local'],
    ['"::" in the middle, one group left and several right', 'fc00::1:2:3', 'private'],
    ['"::" in the middle, several groups left', '2001:db8:0:1::1', 'documentation'],
    ['leading zeros in groups', 'fe80:0000:0000:0000:0000:0000:0000:0001', 'link-local'],
    ['a dotted tail with multi-digit octets', '::ffff:172.31.255.255', 'private'],
    ['a dotted tail just past a range', '::ffff:172.32.0.0', PUBLIC],
    ['a dotted tail after eight-group form', '0:0:0:0:0:ffff:192.168.0.1', 'private'],
    ['a dotted tail in NAT64 with "::"', '64:ff9b::169.254.169.254', 'link-local'],
    ['a dotted tail that is public', '64:ff9b::8.8.4.4', PUBLIC],
    ['IPv4 with leading zeros (not valid: octal ambiguity)', '010.0.0.1', 'reserved'],
    ['an IPv4 address with a port', '10.0.0.1:80', 'reserved'],
    ['a host name', 'localhost', 'reserved'],
  ])('%s: %s is %s', (_name, address, use) => {
    expect(specialUseOf(address)).toBe(use);
  });
});
