// npm run report -- --app <applicationId> --file results.sarif [--scan <scanId>] [--format sarif]
//                    [--scan-type sast] [--triggered-by ci-job-17] [--checkout-path <dir>]
// Sends a scanner's report from CI (docs/spec/CONTRACT.md §11), gzip-compressed as it is read from disk: a new
// scan, or with --scan the triggered scan of an external type it completes. APPSEC_URL (default
// http://localhost:8080) and APPSEC_TOKEN (scope scans:write) come from the environment, or instead
// of the token OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET (a token by the client credentials
// grant, CONTRACT §18; OIDC_SCOPES default scans:write, OIDC_RESOURCE as the provider wants).
import { createReadStream } from "node:fs";
import { access } from "node:fs/promises";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { createGzip } from "node:zlib";
import { machineTokensFromEnv } from "../auth/machine-tokens.ts";

const USAGE =
  "Usage: npm run report -- --app <applicationId> --file <report.json> [--scan <scanId>] [--format sarif|cyclonedx|trivy|grype|zap] [--scan-type sast|dast|sca|container] [--triggered-by <who>] [--checkout-path <dir, default: the current one>]";

function fail(message: string, code = 2): never {
  console.error(message);
  process.exit(code);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      app: { type: "string" },
      file: { type: "string" },
      scan: { type: "string" },
      format: { type: "string" },
      "scan-type": { type: "string" },
      "triggered-by": { type: "string" },
      "checkout-path": { type: "string" },
    },
  }));
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`);
}
if (!values.app || !values.file) fail(USAGE);
const tokens = machineTokensFromEnv(process.env, {
  scope: "scans:write",
  tokenHint: "npm run token -- --scope scans:write",
});
if (typeof tokens === "string") fail(tokens);
const baseUrl = process.env["APPSEC_URL"] || "http://localhost:8080";
await access(values.file).catch(() => fail(`Cannot read ${values.file}`));

const app = encodeURIComponent(values.app);
const path = values.scan
  ? `/applications/${app}/scans/${encodeURIComponent(values.scan)}/report`
  : `/applications/${app}/scan-reports`;
const url = new URL(path, baseUrl);
// Absolute file:// locations (ESLint writes them) are made relative to where the job checked out.
const checkoutPath = values["checkout-path"] ?? process.cwd();
for (const [param, value] of [
  ["format", values.format],
  ["scanType", values["scan-type"]],
  ["triggeredBy", values["triggered-by"]],
  ["checkoutPath", checkoutPath],
]) {
  if (value) url.searchParams.set(param!, value);
}

let token: string;
try {
  token = await tokens.token();
} catch (err) {
  fail(`Could not get a token from ${tokens.source}: ${(err as Error).message}`, 1);
}
let res: Response;
try {
  res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-encoding": "gzip" },
    body: Readable.toWeb(createReadStream(values.file).pipe(createGzip())) as ReadableStream,
    duplex: "half",
  } as RequestInit);
} catch (err) {
  fail(`Could not reach ${baseUrl}: ${(err as Error).cause ?? (err as Error).message}`, 1);
}
/** The scan (docs/spec/CONTRACT.md §11) or a problem+json answer. */
interface Answer {
  id?: string;
  status?: string;
  scanType?: string;
  source?: { tool?: string };
  summary?: Partial<Record<"totalFindings" | "critical" | "high" | "medium" | "low", number>>;
  title?: string;
  detail?: string;
  errors?: { path: string; message: string }[];
}
const body = (await res.json().catch(() => null)) as Answer | null;
if (!res.ok || !body) {
  const errors = body?.errors ?? [];
  fail(
    [
      `${res.status} ${body?.title ?? res.statusText}: ${body?.detail ?? ""}`,
      ...errors.map((e) => `  ${e.path || "(document)"}: ${e.message}`),
    ].join("\n"),
    1,
  );
}
const s = body.summary ?? {};
console.log(
  `Scan ${body.id} ${body.status} (${body.scanType}, ${body.source?.tool}): ` +
    `${s.totalFindings ?? 0} findings: ${s.critical ?? 0} critical, ${s.high ?? 0} high, ${s.medium ?? 0} medium, ${s.low ?? 0} low`,
);
console.log(new URL(res.headers.get("location") ?? path, baseUrl).href);
