import { BlockList, isIP } from 'node:net';

/** `::ffff:203.0.113.7` (IPv4 seen on a dual-stack socket) → `203.0.113.7`. */
export function normaliseIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1]! : ip;
}

export { isIpOrCidr } from './ip-syntax';

/** True when the list is empty (no restriction) or `ip` matches an entry. */
export function ipAllowed(ip: string | undefined, allowlist: readonly string[]): boolean {
  if (!allowlist.length) return true;
  if (!ip) return false;
  const address = normaliseIp(ip);
  const family = isIP(address);
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
