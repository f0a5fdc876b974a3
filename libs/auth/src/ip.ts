import { BlockList, isIP } from 'node:net';

/** `::ffff:203.0.113.7` (IPv4 seen on a dual-stack socket) → `203.0.113.7`. */
export function normaliseIp(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1]! : ip;
}

/** An IPv4/IPv6 address or CIDR range, as accepted in a PAT's IP list. */
export function isIpOrCidr(entry: string): boolean {
  const [addr, bits, ...rest] = entry.split('/');
  if (rest.length || !addr) return false;
  const family = isIP(addr);
  if (!family) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

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
