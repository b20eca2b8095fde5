// Keeps the service's outbound requests away from its own network (docs/spec/CONTRACT.md §7, §12): a URL check
// for literal addresses, and a DNS lookup for the HTTP client that refuses forbidden addresses at
// connect time, so a hostname that later resolves somewhere private (DNS rebinding) gets nowhere.
// One guard, two policies: webhook deliveries (WEBHOOK_ALLOW_PRIVATE_TARGETS) and scan targets
// (SCAN_ALLOW_PRIVATE_TARGETS, plus the hosts and networks of SCAN_TARGET_ALLOW).
import { BlockList, isIPv4, isIPv6, type LookupFunction } from "node:net";
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from "node:dns";
import type { TargetAllowList } from "./target-allow-list.ts";

/** Which non-public targets a kind of outbound request may reach. */
export interface TargetPolicy {
  /** Every non-public address is reachable (development, tests). */
  allowPrivateTargets: boolean;
  /** Non-public hosts and networks reachable all the same (SCAN_TARGET_ALLOW); webhooks have none. */
  allowList?: TargetAllowList;
}

// Not globally reachable: IANA special-purpose registries, plus the deprecated site-local range.
const FORBIDDEN_IPV4 = [
  ["0.0.0.0", 8], // "this network", including the unspecified address
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, including cloud metadata endpoints
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, including the broadcast address
] as const;

const FORBIDDEN_IPV6 = [
  ["::", 96], // unspecified, loopback and the deprecated IPv4-compatible form: never routable
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard-only
  ["2001:2::", 48], // benchmarking
  ["2001:db8::", 32], // documentation
  ["3fff::", 20], // documentation
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const;

const forbidden = new BlockList();
for (const [network, prefix] of FORBIDDEN_IPV4) forbidden.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of FORBIDDEN_IPV6) forbidden.addSubnet(network, prefix, "ipv6");

/** The 16 bytes of a valid IPv6 address, zone id removed. */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.replace(/%.*$/, "");
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] && dotted[2]) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted[2].split(".").map(Number);
    text = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const zeros: string[] = tail === undefined ? [] : Array(8 - headGroups.length - tailGroups.length).fill("0");
  const bytes = new Uint8Array(16);
  [...headGroups, ...zeros, ...tailGroups].forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  });
  return bytes;
}

const startsWith = (bytes: Uint8Array, prefix: number[]): boolean => prefix.every((byte, i) => bytes[i] === byte);
const ipv4At = (bytes: Uint8Array, offset: number, mask = 0): string =>
  Array.from(bytes.subarray(offset, offset + 4), (byte) => byte ^ mask).join(".");

/** The IPv4 address an IPv6 address stands for (mapped, NAT64, 6to4, Teredo client), if any. */
function embeddedIpv4(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])) return ipv4At(bytes, 12); // ::ffff:0:0/96
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return ipv4At(bytes, 12); // 64:ff9b::/96
  if (startsWith(bytes, [0x20, 0x02])) return ipv4At(bytes, 2); // 6to4, 2002::/16
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) return ipv4At(bytes, 12, 0xff); // Teredo, 2001::/32
  return undefined;
}

/**
 * True for any address outbound requests must not reach unless a policy allows it: loopback,
 * private, link-local, CGNAT, multicast, unspecified, broadcast, documentation, benchmarking and
 * reserved ranges, in IPv4 or IPv6, and IPv6 forms that carry such an IPv4 address (mapped, NAT64,
 * 6to4, Teredo). Anything that is not an IP address is forbidden too: the check fails closed.
 */
export function isForbiddenAddress(address: string): boolean {
  if (isIPv4(address)) return forbidden.check(address, "ipv4");
  if (!isIPv6(address)) return true;
  const bytes = ipv6Bytes(address);
  const ipv4 = embeddedIpv4(bytes);
  if (ipv4 !== undefined && isForbiddenAddress(ipv4)) return true;
  return forbidden.check(address.replace(/%.*$/, ""), "ipv6");
}

const isLocalhostName = (hostname: string): boolean => /(^|\.)localhost\.?$/i.test(hostname);

/** Whether the policy refuses `address`, which `hostname` resolved to (or is, for a literal). */
export function isRefusedTarget(policy: TargetPolicy, hostname: string, address: string): boolean {
  if (policy.allowPrivateTargets || !isForbiddenAddress(address)) return false;
  return !(policy.allowList?.allowsHost(hostname) || policy.allowList?.allowsAddress(address));
}

/**
 * Why the policy refuses the host of a parsed URL before any lookup, or null: `localhost` names and
 * non-public IP literals. The URL parser has already normalised numeric hosts (2130706433, 0x7f.1)
 * to dotted form.
 */
export function literalHostRefusal(url: URL, policy: TargetPolicy): string | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (policy.allowPrivateTargets || policy.allowList?.allowsHost(host)) return null;
  if (isLocalhostName(host)) return "must not point to localhost";
  if ((isIPv4(host) || isIPv6(host)) && isRefusedTarget(policy, host, host)) {
    return "must not point to a loopback, private, link-local, multicast or otherwise non-public address";
  }
  return null;
}

/**
 * Why a subscription URL is refused, or null if it is acceptable. Hostnames are checked again, after
 * DNS, by the guarded lookup. IP literals never reach a lookup (net.connect skips it for them), so
 * the dispatcher runs this check again before each delivery.
 */
export function checkWebhookUrl(url: string, policy: TargetPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "url must be a valid absolute URL";
  }
  if (parsed.protocol !== "https:") return "url must use https://";
  if (parsed.username !== "" || parsed.password !== "") return "url must not contain credentials";
  const refusal = literalHostRefusal(parsed, policy);
  return refusal && `url ${refusal}`;
}

export class ForbiddenTargetError extends Error {
  readonly code = "ESSRF";
  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super(`Refusing to connect to ${hostname}: it resolves to ${address}, which is not a public address`);
    this.name = "ForbiddenTargetError";
  }
}

/** The shape of `dns.lookup` with `all: true`; injectable so tests need no DNS. */
export type ResolveAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for `net.connect` / `tls.connect` (undici: `new Agent({ connect: { lookup } })`) that
 * fails with a ForbiddenTargetError (code ESSRF) if the policy refuses ANY address the name resolves to.
 */
export function createGuardedLookup({
  resolveAll = dnsLookup,
  ...policy
}: TargetPolicy & { resolveAll?: ResolveAll }): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = addresses.find((a) => isRefusedTarget(policy, hostname, a.address));
      if (refused) return callback(new ForbiddenTargetError(hostname, refused.address), []);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`No address found for ${hostname}`), { code: "ENOTFOUND" }), []);
      if (options.all) return callback(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}
