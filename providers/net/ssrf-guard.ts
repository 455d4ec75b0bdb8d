import type { LookupAddress } from 'node:dns';
import { lookup as systemLookup } from 'node:dns/promises';
import { isIP, isIPv4, type LookupFunction } from 'node:net';

/**
 * The server-side request forgery guard of HTTP tools: a tool's URL is written by a customer
 * (or filled in by a language model), so without it a tool could read the cloud metadata
 * service, an admin port on loopback or anything else on our private network.
 *
 * The host is resolved once, every address it resolves to is checked, and the request then
 * connects to exactly those checked addresses (`pinnedLookup`), so a DNS answer that changes
 * between the check and the connection (DNS rebinding) cannot slip through.
 */

/** Why an address is refused: the kind of range it lies in. */
export type BlockedRange = 'private' | 'loopback' | 'link-local' | 'unique-local' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved';

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address (the shape of `dns.promises.lookup` with `all: true`). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface GuardOptions {
  /** Allow private, loopback and link-local targets (TOOLS_ALLOW_PRIVATE_NETWORKS; tests and on-premises setups). */
  allowPrivateNetworks: boolean;
  /** The resolver (default: the system's, as every other connection of the process uses). */
  resolve?: Resolver;
}

/** A target the guard refuses; no connection was attempted. */
export class BlockedAddressError extends Error {
  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly range: BlockedRange,
  ) {
    const via = hostname === address ? address : `${hostname} resolves to ${address}, which`;
    super(`${via} is ${range === 'unspecified' ? 'an' : 'a'} ${range} address; tools may only call public addresses`);
    this.name = 'BlockedAddressError';
  }
}

interface Range {
  bytes: number[];
  bits: number;
  kind: BlockedRange;
}

// First match wins (the broadcast address lies inside 240/4).
const IPV4_RANGES: Range[] = [
  v4('0.0.0.0', 8, 'unspecified'), // "this network"; 0.0.0.0 reaches the local host on Linux
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'private'), // carrier-grade NAT (shared address space)
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'), // holds the cloud metadata service 169.254.169.254
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'), // IETF protocol assignments
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'reserved'), // network benchmarking
  v4('255.255.255.255', 32, 'broadcast'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved'),
];

const IPV6_RANGES: Range[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('fc00::', 7, 'unique-local'),
  v6('fe80::', 10, 'link-local'),
  v6('fec0::', 10, 'private'), // site-local, deprecated but still routable inside some networks
  v6('ff00::', 8, 'multicast'),
];

/** IPv6 forms that carry an IPv4 address, which is judged instead (where the packet really goes). */
const IPV4_CARRIERS: { prefix: Range; offset: number }[] = [
  { prefix: v6('::ffff:0:0', 96, 'reserved'), offset: 12 }, // IPv4-mapped
  { prefix: v6('::', 96, 'reserved'), offset: 12 }, // IPv4-compatible (deprecated)
  { prefix: v6('64:ff9b::', 96, 'reserved'), offset: 12 }, // NAT64
  { prefix: v6('2002::', 16, 'reserved'), offset: 2 }, // 6to4
];

/** The blocked range an IP address lies in, or null for a public address. */
export function blockedRangeOf(address: string): BlockedRange | null {
  if (!isIP(address)) throw new TypeError(`not an IP address: ${address}`);
  if (isIPv4(address)) return firstMatch(ipv4Bytes(address), IPV4_RANGES);
  const bytes = ipv6Bytes(address);
  const own = firstMatch(bytes, IPV6_RANGES);
  if (own) return own;
  const carrier = IPV4_CARRIERS.find(({ prefix }) => inRange(bytes, prefix));
  return carrier ? firstMatch(bytes.slice(carrier.offset, carrier.offset + 4), IPV4_RANGES) : null;
}

/**
 * Every address of `hostname`, each checked; throws BlockedAddressError when ANY of them is
 * blocked (a name with one public and one private address could be connected to either).
 * An IP literal (IPv6 with or without brackets) is checked without asking DNS. DNS failures
 * propagate as the resolver's errors (`ENOTFOUND`, `EAI_AGAIN`, ...).
 */
export async function checkedAddresses(hostname: string, options: GuardOptions): Promise<CheckedAddress[]> {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const literal = isIP(host);
  const found = literal ? [{ address: host, family: literal }] : await (options.resolve ?? resolveAll)(host);
  if (found.length === 0) throw Object.assign(new Error(`${host} has no addresses`), { code: 'ENODATA', hostname: host });
  const addresses = found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }) as const);
  if (!options.allowPrivateNetworks) {
    for (const { address } of addresses) {
      const range = blockedRangeOf(address);
      if (range) throw new BlockedAddressError(host, address, range);
    }
  }
  return addresses;
}

/**
 * A `lookup` for `http.request` / `net.connect` that answers the already-checked addresses
 * instead of asking DNS again. The URL keeps its host name, so the Host header and the TLS
 * server name (SNI, certificate check) stay the original ones.
 */
export function pinnedLookup(addresses: CheckedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const usable = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    if (usable.length === 0) {
      callback(Object.assign(new Error(`no IPv${options.family} address was checked`), { code: 'ENOTFOUND' }), '');
      return;
    }
    // Node asks for all addresses when it races them (autoSelectFamily); every one is checked.
    if (options.all) callback(null, usable);
    else callback(null, usable[0].address, usable[0].family);
  };
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return systemLookup(hostname, { all: true, verbatim: true });
}

function firstMatch(bytes: number[], ranges: Range[]): BlockedRange | null {
  return ranges.find((range) => inRange(bytes, range))?.kind ?? null;
}

function inRange(bytes: number[], { bytes: prefix, bits }: Range): boolean {
  if (bytes.length !== prefix.length) return false;
  const whole = Math.floor(bits / 8);
  for (let i = 0; i < whole; i++) if (bytes[i] !== prefix[i]) return false;
  const rest = bits % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (bytes[whole] & mask) === (prefix[whole] & mask);
}

function v4(address: string, bits: number, kind: BlockedRange): Range {
  return { bytes: ipv4Bytes(address), bits, kind };
}

function v6(address: string, bits: number, kind: BlockedRange): Range {
  return { bytes: ipv6Bytes(address), bits, kind };
}

function ipv4Bytes(address: string): number[] {
  return address.split('.').map(Number);
}

/** The 16 bytes of a valid IPv6 address (zone id ignored, dotted IPv4 tail allowed). */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0].toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const words = (part: string | undefined) => (part ? part.split(':').map((word) => parseInt(word, 16)) : []);
  const headWords = words(head);
  const tailWords = words(tail);
  const all = tail === undefined ? headWords : [...headWords, ...new Array<number>(8 - headWords.length - tailWords.length).fill(0), ...tailWords];
  return all.flatMap((word) => [word >> 8, word & 0xff]);
}
