import { BlockList, isIP } from 'node:net';

/** How many addresses and ranges one trigger's `allowed_source_ips` may hold. */
export const MAX_SOURCE_IP_ENTRIES = 50;

/**
 * The shape of an entry: an address of hex digits, colons and dots, and an optional prefix length
 * without leading zeros. No spaces and no IPv6 zone (`%eth0`). The address itself is then checked
 * by `net.isIP`, which is stricter (no leading zeros in IPv4 octets, at most one `::`).
 */
export const SOURCE_IP_ENTRY = new RegExp('^[0-9A-Fa-f:.]{2,45}(/(0|[1-9][0-9]{0,2}))?$');

interface Subnet {
  address: string;
  prefix: number;
  type: 'ipv4' | 'ipv6';
}

/** An allowlist entry (`203.0.113.7`, `203.0.113.0/24`, `2001:db8::/32`) as a subnet, or undefined when it is not one. */
function subnetOf(entry: string): Subnet | undefined {
  if (!SOURCE_IP_ENTRY.test(entry)) return undefined;
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return undefined;
  const bits = family === 4 ? 32 : 128;
  const prefix = slash === -1 ? bits : Number(entry.slice(slash + 1));
  return prefix <= bits ? { address, prefix, type: family === 4 ? 'ipv4' : 'ipv6' } : undefined;
}

/** True for an IPv4 or IPv6 address, or such an address with a prefix length (CIDR) within its family's bits. */
export const isSourceIpEntry = (entry: string): boolean => subnetOf(entry) !== undefined;

/**
 * The matcher of each allowlist, built once per list: a cached trigger keeps its list object, so a
 * burst of deliveries builds it once. Keyed weakly, so a list goes when its trigger does.
 */
const matchers = new WeakMap<readonly string[], BlockList>();

function matcherOf(entries: readonly string[]): BlockList {
  let matcher = matchers.get(entries);
  if (!matcher) {
    matcher = new BlockList();
    // Entries were validated when stored; one that is not a subnet (never expected) matches nothing.
    for (const subnet of entries.map(subnetOf)) if (subnet) matcher.addSubnet(subnet.address, subnet.prefix, subnet.type);
    matchers.set(entries, matcher);
  }
  return matcher;
}

/**
 * True when `address` (the client address API Gateway saw) is in one of `entries`. An IPv4 address
 * written as IPv6 (`::ffff:127.0.0.1`) matches IPv4 ranges, as `BlockList` documents. A missing or
 * malformed address matches nothing.
 */
export function isSourceIpAllowed(entries: readonly string[], address: string | undefined): boolean {
  const family = address === undefined ? 0 : isIP(address);
  if (family === 0) return false;
  try {
    return matcherOf(entries).check(address!, family === 4 ? 'ipv4' : 'ipv6');
  } catch {
    return false; // isIP let it through and BlockList did not: not an address the gateway sends
  }
}
