// Every special-use address class an outbound fetch must refuse (RFC 6890), in IPv4, IPv6 and the IPv6 forms that
// carry an IPv4 address; and public addresses, which it must not.
import { specialUseOf } from '../../../lib/outbound/special-addresses';

describe('special-use addresses', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.254', 'shared (CGNAT)'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['::a00:1', 'reserved'], // IPv4-compatible form
    ['2001::1', 'reserved'], // Teredo
    ['2002:a00:1::1', 'reserved'], // 6to4
    ['64:ff9b:1::a00:1', 'reserved'], // local-use NAT64
    ['192.0.2.1', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    // IPv4-mapped and NAT64 forms are judged by the IPv4 address they carry.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    // Outside global unicast (2000::/3): refused whether or not any list names them.
    ['::ffff:0:a9fe:a9fe', 'reserved'], // SIIT (IPv4-translated) form of 169.254.169.254
    ['::ffff:0:169.254.169.254', 'reserved'],
    ['::ffff:0:7f00:1', 'reserved'], // SIIT form of 127.0.0.1
    ['1::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['e000::1', 'reserved'],
    ['100::1', 'reserved'], // discard-only
    ['100:0:0:1::1', 'reserved'], // dummy prefix (RFC 9780)
    ['5f00::1', 'reserved'], // SRv6 SIDs
    ['fec0::1', 'reserved'], // site-local (deprecated)
    ['200::1', 'reserved'], // OSI NSAP (deprecated)
    ['::2', 'reserved'],
    ['::1:0:0:1', 'reserved'],
    ['::fffe:a9fe:a9fe', 'reserved'],
    // Inside it, the special-purpose ranges, the registry's few globally reachable ones in 2001::/23 included.
    ['2001:2::1', 'reserved'], // benchmarking
    ['2001:10::1', 'reserved'], // ORCHID
    ['2001:20::1', 'reserved'], // ORCHIDv2
    ['2001:1::1', 'reserved'], // PCP anycast
    ['2001:1ff:ffff::1', 'reserved'],
    ['3fff::1', 'documentation'], // RFC 9637
    ['3fff:fff:ffff::1', 'documentation'],
    // Not an address at all is never taken for a public one.
    ['not-an-ip', 'reserved'],
    ['', 'reserved'],
  ])('%s is %s', (address, use) => {
    expect(specialUseOf(address)).toBe(use);
  });

  test.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2001:200::1', // the first block after 2001::/23
    '2a00:1450:4001:81c::200e',
    '2c0f:fb50:4003::1',
    '3ffe:ffff::1',
    '3fff:1000::1', // just past the documentation /20
  ])('%s is public', (address) => {
    expect(specialUseOf(address)).toBeUndefined();
  });
});
