/**
 * The syntax of the addresses and CIDR ranges a PAT's IP list takes: the one rule the server
 * applies and the dashboard checks in the browser (this file is bundled into the page script,
 * so it uses nothing of Node's).
 */
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** 4 or 6 for an IPv4 or IPv6 address (no zone id), 0 for anything else. */
function ipFamily(address: string): 0 | 4 | 6 {
  if (IPV4.test(address)) return 4;
  if (!/^[0-9A-Fa-f:.]+$/.test(address) || !address.includes(':')) return 0;
  try {
    new URL(`http://[${address}]/`);
    return 6;
  } catch {
    return 0;
  }
}

/** An IPv4/IPv6 address or CIDR range, as accepted in a PAT's IP list. */
export function isIpOrCidr(entry: string): boolean {
  const [address, bits, ...rest] = entry.split('/');
  if (rest.length || !address) return false;
  const family = ipFamily(address);
  if (!family) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}
