import { ipAllowed, nonPublicAddress } from './ip';

describe('public and non-public addresses', () => {
  it('names loopback, private, link-local (cloud metadata), shared, multicast and reserved ranges in both families', () => {
    const cases: Array<[string, string | null]> = [
      ['127.0.0.1', 'loopback'],
      ['127.9.9.9', 'loopback'],
      ['::1', 'loopback'],
      ['[::1]', 'loopback'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['10.0.0.8', 'private'],
      ['172.16.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['fd00:ec2::254', 'private'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['100.64.0.1', 'shared (carrier-grade NAT)'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'reserved'],
      ['198.18.0.1', 'reserved'],
      // IPv4 inside IPv6: mapped, compatible, NAT64, 6to4.
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::ffff:a9fe:a9fe', 'link-local'],
      ['::127.0.0.1', 'reserved'],
      ['64:ff9b::7f00:1', 'reserved'],
      ['2002:7f00:1::1', 'reserved'],
      ['2001:db8::1', 'reserved'],
      ['8.8.8.8', null],
      ['172.32.0.1', null],
      ['::ffff:8.8.8.8', null],
      ['2606:4700::1111', null],
      ['keys.vendor.example', 'not an IP address'],
    ];
    expect(cases.map(([address]) => [address, nonPublicAddress(address)])).toEqual(cases);
  });
});

describe('client address rules (a PAT or app allowlist)', () => {
  it('allow anyone with an empty list, and only listed addresses or subnets otherwise', () => {
    expect(ipAllowed('198.51.100.7', [])).toBe(true);
    expect(ipAllowed(undefined, [])).toBe(true);
    const list = ['198.51.100.7', '203.0.113.0/24', '2001:db8::/32'];
    expect(ipAllowed('198.51.100.7', list)).toBe(true);
    expect(ipAllowed('198.51.100.8', list)).toBe(false);
    expect(ipAllowed('203.0.113.250', list)).toBe(true);
    expect(ipAllowed('203.0.114.1', list)).toBe(false);
    expect(ipAllowed('2001:db8:1::9', list)).toBe(true);
    expect(ipAllowed('2001:db9::1', list)).toBe(false);
  });

  it('match an IPv4 address in its IPv4-mapped IPv6 form (a dual-stack socket), both ways, but not another address around it', () => {
    expect(ipAllowed('::ffff:198.51.100.7', ['198.51.100.7'])).toBe(true);
    expect(ipAllowed('::ffff:203.0.113.9', ['203.0.113.0/24'])).toBe(true);
    expect(ipAllowed('198.51.100.7', ['::ffff:198.51.100.7'])).toBe(true);
    expect(ipAllowed('1::ffff:198.51.100.7', ['198.51.100.7'])).toBe(false);
  });

  it('refuse a missing or malformed client address when a list applies', () => {
    expect(ipAllowed(undefined, ['0.0.0.0/0'])).toBe(false);
    expect(ipAllowed('', ['0.0.0.0/0'])).toBe(false);
    expect(ipAllowed('not-an-address', ['0.0.0.0/0', '::/0'])).toBe(false);
  });

  it('skip an entry that is not an address rather than fail the whole list', () => {
    expect(ipAllowed('198.51.100.7', ['garbage', 'also/bad', '198.51.100.7'])).toBe(true);
    expect(ipAllowed('198.51.100.8', ['garbage', '198.51.100.7'])).toBe(false);
  });
});
