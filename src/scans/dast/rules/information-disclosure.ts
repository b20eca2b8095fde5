// What a response gives away about the software and the network behind it: version banners,
// debug error output, directory listings, private addresses.
import { BlockList } from "node:net";
import { isJavaScript, isText, type ObservedResponse } from "../observed-response.ts";
import type { PassiveRule, RuleHit } from "../passive-rule.ts";

const none: RuleHit[] = [];

export const serverVersionLeak: PassiveRule = {
  pluginId: 10036,
  alertRef: "10036-2",
  name: 'Server Leaks Version Information via "Server" HTTP Response Header Field',
  risk: 1,
  confidence: 3,
  cweId: 497,
  wascId: 13,
  inspects: "every response: a `Server` header that carries a version (any digit), e.g. `nginx/1.25.3`",
  description:
    "The Server header names the web server and its version, which tells an attacker which known vulnerabilities to try.",
  solution: "Configure the web server, proxy or framework to send no Server header, or one without a version.",
  references: [
    "https://httpd.apache.org/docs/current/mod/core.html#servertokens",
    "https://nginx.org/en/docs/http/ngx_http_core_module.html#server_tokens",
  ],
  check: (r) =>
    r.headers
      .all("server")
      .filter((value) => /\d/.test(value))
      .map((value) => ({ evidence: value })),
};

export const xPoweredByLeak: PassiveRule = {
  pluginId: 10037,
  alertRef: "10037",
  name: 'Server Leaks Information via "X-Powered-By" HTTP Response Header Field(s)',
  risk: 1,
  confidence: 2,
  cweId: 497,
  wascId: 13,
  inspects: "every response: any `X-Powered-By` header",
  description:
    "X-Powered-By names the framework or platform behind the application (often with its version), which helps an attacker choose known vulnerabilities to try.",
  solution:
    "Configure the framework or server to send no X-Powered-By header (Express: app.disable('x-powered-by'); PHP: expose_php = Off).",
  references: [
    "https://owasp.org/www-project-web-security-testing-guide/v42/4-Web_Application_Security_Testing/01-Information_Gathering/08-Fingerprint_Web_Application_Framework",
  ],
  check(r) {
    const [first, ...others] = r.headers.all("x-powered-by");
    if (first === undefined) return none;
    return [
      {
        evidence: `x-powered-by: ${first}`,
        otherInfo: others.length ? `Other X-Powered-By values: ${others.join(", ")}` : undefined,
      },
    ];
  },
};

/**
 * Text that debug and error pages of common platforms print, which a production page should never
 * show: stack traces, interpreter warnings, database errors, framework debug pages. Compared
 * case-insensitively.
 */
export const DEBUG_ERROR_SIGNATURES: readonly string[] = [
  "Traceback (most recent call last)",
  "PHP Parse error",
  "PHP Warning",
  "PHP Fatal error",
  "Fatal error: Uncaught",
  "Warning: Cannot modify header information - headers already sent",
  'Exception in thread "main"',
  "You have an error in your SQL syntax",
  "Unclosed quotation mark after the character string",
  "incorrect syntax near",
  "Microsoft OLE DB Provider for",
  "ODBC Drivers error",
  "access denied for user",
  "Server Error in '/' Application",
  "You're seeing this error because you have DEBUG = True",
  "Whitelabel Error Page",
  "Error Occurred While Processing Request",
];
const LOWER_SIGNATURES = DEBUG_ERROR_SIGNATURES.map((s) => s.toLowerCase());

export const debugErrorMessages: PassiveRule = {
  pluginId: 10023,
  alertRef: "10023",
  name: "Information Disclosure - Debug Error Messages",
  risk: 1,
  confidence: 2,
  cweId: 1295,
  wascId: 13,
  inspects:
    "text responses other than JavaScript: the body contains a known debug or error output (stack traces, PHP warnings, SQL errors, framework debug pages)",
  description:
    "The response shows a debug or error message that reveals how the application works inside (code paths, queries, versions), which helps an attacker.",
  solution:
    "Turn off debug output in production and answer errors with a generic page; log the details on the server instead.",
  references: ["https://cheatsheetseries.owasp.org/cheatsheets/Error_Handling_Cheat_Sheet.html"],
  check(r) {
    if (!isText(r) || isJavaScript(r) || r.body.length === 0) return none;
    const lower = r.body.toLowerCase();
    for (const signature of LOWER_SIGNATURES) {
      const at = lower.indexOf(signature);
      if (at >= 0) return [{ evidence: r.body.slice(at, at + signature.length) }];
    }
    return none;
  },
};

/** Directory listings of common servers, and the server each points to. */
const LISTINGS: ReadonlyArray<[RegExp, string]> = [
  [/<title>\s*Index of \/[^<]*<\/title>/i, "Apache httpd or nginx (autoindex)"],
  [/<pre><a\s+href\s*=\s*"\/[^"]*">\[To Parent Directory\]<\/a>/i, "Microsoft IIS"],
  [/<title>\s*Directory listing for \/[^<]*<\/title>/i, "Python http.server"],
];

export const directoryBrowsing: PassiveRule = {
  pluginId: 10033,
  alertRef: "10033",
  name: "Directory Browsing",
  risk: 2,
  confidence: 2,
  cweId: 548,
  wascId: 16,
  inspects: "every response body: a directory listing as Apache httpd, nginx, IIS or Python's http.server write it",
  description:
    "The server lists a directory's contents, which may reveal files that were never meant to be linked: backups, configuration, scripts, data.",
  solution:
    "Turn off directory listings in the web server (Apache: Options -Indexes; nginx: autoindex off) and serve an index page or a 403 instead.",
  references: ["https://cwe.mitre.org/data/definitions/548.html"],
  check(r) {
    for (const [pattern, server] of LISTINGS) {
      const match = pattern.exec(r.body);
      if (match) return [{ evidence: match[0], otherInfo: `The listing looks like that of ${server}.` }];
    }
    return none;
  },
};

const PRIVATE_IPV4 = new BlockList();
for (const [network, prefix] of [
  ["10.0.0.0", 8],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
] as const)
  PRIVATE_IPV4.addSubnet(network, prefix, "ipv4");

/** Dotted quads not part of a longer dotted number (a version, an OID), with an optional port. */
const DOTTED = /(?<![\d.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?!\.?\d)(:\d{1,5}\b)?/g;
/** EC2's private host names, such as ip-10-0-56-78. */
const EC2_NAME = /\bip-(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})(?!-?\d)/g;

/** Every RFC 1918 address the text shows (as written, with its port), except the host being scanned. */
export function privateAddressesIn(text: string, requestHost: string): string[] {
  const found: string[] = [];
  for (const pattern of [DOTTED, EC2_NAME]) {
    for (const match of text.matchAll(pattern)) {
      const octets = match.slice(1, 5).map(Number);
      if (octets.some((octet) => octet > 255)) continue;
      const address = octets.join(".");
      if (address === requestHost || !PRIVATE_IPV4.check(address, "ipv4")) continue;
      found.push(match[0]);
    }
  }
  return found;
}

export const privateIpDisclosure: PassiveRule = {
  pluginId: 2,
  alertRef: "2",
  name: "Private IP Disclosure",
  risk: 1,
  confidence: 2,
  cweId: 497,
  wascId: 13,
  inspects:
    "text response bodies: an RFC 1918 address (10/8, 172.16/12, 192.168/16) or an EC2 private host name (`ip-10-0-0-1`) other than the scanned host",
  description:
    "The response shows a private IP address of the internal network, which helps an attacker map it for further attacks.",
  solution: "Remove internal addresses from responses (pages, comments, scripts, error messages, API payloads).",
  references: ["https://datatracker.ietf.org/doc/html/rfc1918"],
  check(r: ObservedResponse) {
    if (!isText(r)) return none;
    const found = privateAddressesIn(r.body, r.url.hostname);
    if (found.length === 0) return none;
    return [{ evidence: found[0], otherInfo: [...new Set(found)].join("\n") }];
  },
};
