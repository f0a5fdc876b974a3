import { BlockList, isIP } from 'node:net';

export { isIpOrCidr } from './ip-syntax';

/**
 * True when the list is empty (no restriction) or `ip` matches an entry. An IPv4 address and its
 * IPv4-mapped IPv6 form (`::ffff:203.0.113.7`, as a dual-stack socket reports it) match each
 * other's entries: Node's BlockList compares the two forms as one address.
 */
export function ipAllowed(ip: string | undefined, allowlist: readonly string[]): boolean {
  if (!allowlist.length) return true;
  // Stryker disable next-line StringLiteral: any text that is not an address is refused alike
  const address = ip ?? '';
  const family = isIP(address);
  // Stryker disable next-line ConditionalExpression: BlockList refuses a non-address too; this says so without asking it
  if (!family) return false;
  const list = new BlockList();
  for (const entry of allowlist) {
    const [addr, bits] = entry.split('/');
    const entryFamily = isIP(addr!);
    if (!entryFamily) continue;
    const type = entryFamily === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(addr!, type);
    else list.addSubnet(addr!, Number(bits), type);
  }
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Address ranges nobody outside should make us connect to, by what they are (IPv4 rules also match their IPv4-mapped IPv6 forms). */
const NON_PUBLIC: ReadonlyArray<[label: string, ranges: ReadonlyArray<[address: string, bits: number]>]> = [
  [
    'loopback',
    [
      ['127.0.0.0', 8],
      ['::1', 128],
    ],
  ],
  [
    'unspecified',
    [
      ['0.0.0.0', 8],
      ['::', 128],
    ],
  ],
  [
    'private',
    [
      ['10.0.0.0', 8],
      ['172.16.0.0', 12],
      ['192.168.0.0', 16],
      ['fc00::', 7],
      ['fec0::', 10],
    ],
  ],
  // 169.254.169.254 and fd00:ec2::254 are where cloud instances read their credentials.
  [
    'link-local',
    [
      ['169.254.0.0', 16],
      ['fe80::', 10],
    ],
  ],
  ['shared (carrier-grade NAT)', [['100.64.0.0', 10]]],
  [
    'multicast',
    [
      ['224.0.0.0', 4],
      ['ff00::', 8],
    ],
  ],
  [
    'reserved',
    [
      ['192.0.0.0', 24],
      ['192.0.2.0', 24],
      ['192.88.99.0', 24],
      ['198.18.0.0', 15],
      ['198.51.100.0', 24],
      ['203.0.113.0', 24],
      ['240.0.0.0', 4],
      // Translated or tunnelled IPv4 (NAT64, Teredo, 6to4) could lead back to any address above.
      ['64:ff9b::', 96],
      ['64:ff9b:1::', 48],
      ['100::', 64],
      ['2001::', 23],
      ['2001:db8::', 32],
      ['2002::', 16],
    ],
  ],
];
const nonPublicLists = NON_PUBLIC.map(([label, ranges]) => {
  const list = new BlockList();
  for (const [address, bits] of ranges) list.addSubnet(address, bits, isIP(address) === 4 ? 'ipv4' : 'ipv6');
  return [label, list] as const;
});
const globalUnicastV6 = new BlockList();
globalUnicastV6.addSubnet('2000::', 3, 'ipv6');
const ipv4Mapped = new BlockList();
ipv4Mapped.addSubnet('::ffff:0:0', 96, 'ipv6');

/**
 * What kind of non-public address `address` is ("loopback", "private", "link-local", …), or null
 * for a public unicast address. An IPv6 address counts as public only inside 2000::/3, outside
 * the ranges above; IPv4-mapped forms are judged as the IPv4 address they carry. Anything that
 * is not an IP address is "not an IP address".
 */
export function nonPublicAddress(address: string): string | null {
  // Stryker disable next-line Regex: isIP refuses any text left around a bracket that an unanchored pattern would strip
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare);
  if (!family) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [label, list] of nonPublicLists) if (list.check(bare, type)) return label;
  if (family === 6 && !ipv4Mapped.check(bare, 'ipv6') && !globalUnicastV6.check(bare, 'ipv6')) return 'reserved';
  return null;
}
