// Hosts and networks an operator lets outbound requests reach although they are not public
// (SCAN_TARGET_ALLOW: `staging.internal,10.20.0.0/16,fd00::/8`): the scan targets of a company's own
// network, without opening every private address to every application's serviceUrl.
import { BlockList, isIP } from "node:net";

/** A host name as URLs carry it: labels of letters, digits, `-` and `_`, optionally `*.` first. */
const HOST_NAME = /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

export class TargetAllowList {
  private constructor(
    /** Exact names, and `*.suffix` entries kept as `.suffix`. */
    private readonly hosts: readonly string[],
    private readonly networks: BlockList,
    readonly entries: readonly string[],
  ) {}

  /**
   * Comma-separated host names (`*.corp.example` matches any name under it), IP addresses and CIDR
   * networks. Throws an Error naming the first entry that is none of these.
   */
  static parse(text: string): TargetAllowList {
    const entries = text
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean);
    const hosts: string[] = [];
    const networks = new BlockList();
    for (const entry of entries) {
      const [address = "", prefix, ...rest] = entry.split("/");
      const family = isIP(address);
      if (family !== 0 && rest.length === 0) {
        const type = family === 4 ? "ipv4" : "ipv6";
        const max = family === 4 ? 32 : 128;
        const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
        if (!(bits >= 0 && bits <= max)) throw new Error(`"${entry}" has no valid prefix length (0-${max})`);
        networks.addSubnet(address, bits, type);
      } else if (prefix === undefined && HOST_NAME.test(normalHost(entry))) {
        hosts.push(entry.startsWith("*.") ? normalHost(entry).slice(1) : normalHost(entry));
      } else {
        throw new Error(`"${entry}" is neither a host name, an IP address nor a CIDR network`);
      }
    }
    return new TargetAllowList(hosts, networks, entries);
  }

  /** Whether the name (as a URL or a DNS lookup carries it) is listed. */
  allowsHost(hostname: string): boolean {
    const host = normalHost(hostname.replace(/^\[(.*)\]$/, "$1"));
    return this.hosts.some((allowed) => (allowed.startsWith(".") ? host.endsWith(allowed) : host === allowed));
  }

  /** Whether the address lies in a listed network (IPv4-mapped IPv6 addresses count as their IPv4 address). */
  allowsAddress(address: string): boolean {
    const bare = address.replace(/%.*$/, ""); // an IPv6 zone id says nothing about the network
    const family = isIP(bare);
    if (family === 0) return false;
    return this.networks.check(bare, family === 4 ? "ipv4" : "ipv6");
  }
}

/** Lower case without the trailing dot of a fully qualified name. */
const normalHost = (host: string): string => host.toLowerCase().replace(/\.$/, "");
