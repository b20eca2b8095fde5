// OWASP ZAP's traditional JSON report (`-J report.json`, the baseline and full scans' output) →
// findings (docs/spec/CONTRACT.md §11). ZAP publishes no JSON Schema for it; the shape is that of its
// documentation. One finding per alert and instance (URL and parameter); risk 0 is informational.
//
// How a ZAP report says what ZAP did (the reports add-on's traditional-json template; the scan
// scripts in zaproxy/zaproxy docker/, e.g. zap-baseline.py):
// - "The tool failed": the scripts write no report when ZAP fails (exit code 3, "Any other
//   failure"), nor when the target answered nothing ("No URLs found - is the target URL
//   accessible?"). A report listing no site at all (`site: []`) is that case: ZAP reached nothing
//   to scan. It says the tool failed, as the built-in baseline fails a target that answers nothing
//   (docs/spec/CONTRACT.md §12).
// - "This part was not scanned": a site (`site[]."@name"`, scheme, host and port) not in `site`.
// - "Nothing found": a site listed with `alerts: []`.
// So a report resolves only the findings of the sites it lists.
import { decodeHTML } from "entities";
import { z } from "zod";
import type { Severity } from "../../domain/validation.ts";
import type { Finding } from "../../domain/vulnerabilities/finding.ts";
import { clip, cvssScoreFor, cweOf, fingerprintOf, TEXT_MAX, titleOf } from "./finding-rules.ts";
import { checkShape } from "./shape-check.ts";
import { isObject, type ReportParser } from "./report.ts";

const instance = z.looseObject({
  uri: z.string(),
  method: z.string().optional(),
  param: z.string().optional(),
  evidence: z.string().optional(),
  otherinfo: z.string().optional(),
});

const alert = z.looseObject({
  pluginid: z.string().min(1),
  alert: z.string().optional(),
  name: z.string().optional(),
  riskcode: z.enum(["0", "1", "2", "3"]),
  desc: z.string().optional(),
  solution: z.string().optional(),
  otherinfo: z.string().optional(),
  cweid: z.string().optional(),
  instances: z.array(instance).optional(),
});

const zapSchema = z.looseObject({
  "@programName": z.string().optional(),
  "@version": z.string(),
  site: z.array(z.looseObject({ "@name": z.string(), alerts: z.array(alert) })),
});

type Alert = z.infer<typeof alert>;

const RISK: Record<Alert["riskcode"], Severity | null> = { "3": "high", "2": "medium", "1": "low", "0": null };

/** ZAP writes its texts as HTML paragraphs; findings hold plain text. */
function plainText(html: string): string {
  const text = html
    .replace(/<\/p>\s*<p>/gi, "\n\n")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<[^>]*>/g, "");
  // HTML's own decoding: a reference to no character (a surrogate, 0) becomes U+FFFD, never a lone surrogate.
  return decodeHTML(text).trim();
}

function findingsOf(a: Alert, tool: string, site: string): Finding[] {
  const severity = RISK[a.riskcode];
  if (!severity) return [];
  const name = a.alert ?? a.name ?? `ZAP plugin ${a.pluginid}`;
  const description = plainText(a.desc ?? name);
  const instances = a.instances?.length ? a.instances : [{ uri: site, param: "" } as z.infer<typeof instance>];
  return instances.map((i) => {
    const details = [
      i.param && `Parameter: ${i.param}`,
      i.evidence && `Evidence: ${i.evidence}`,
      (i.otherinfo || a.otherinfo) && plainText(i.otherinfo || a.otherinfo!),
    ].filter(Boolean);
    return {
      part: site,
      fingerprint: fingerprintOf("zap", tool, [a.pluginid, i.uri, i.param ?? ""]),
      title: titleOf(name),
      description: clip([description, ...details].join("\n\n"), TEXT_MAX),
      severity,
      cwe: cweOf([a.cweid]),
      cve: null,
      cvssScore: cvssScoreFor(severity),
      introducedIn: i.uri,
      remediation: clip(plainText(a.solution ?? "") || "See the alert's references", TEXT_MAX),
      packageName: null,
      packageVersion: null,
      location: i.uri,
    };
  });
}

export const zapReport: ReportParser = {
  format: "zap",

  detect: (document) =>
    isObject(document) && Array.isArray(document["site"]) && ("@version" in document || "@programName" in document),

  parse(document) {
    const report = checkShape(zapSchema, document, "ZAP JSON report");
    const tool = report["@programName"] ?? "ZAP";
    const findings = report.site.flatMap((site) => site.alerts.flatMap((a) => findingsOf(a, tool, site["@name"])));
    const failure =
      report.site.length === 0
        ? {
            reason: "The report says the tool failed: it lists no site, so ZAP reached nothing to scan",
            errors: [{ path: "/site", message: "Empty: ZAP reached no site" }],
          }
        : null;
    const parts = [...new Set(report.site.map((site) => site["@name"]))];
    return {
      format: "zap",
      tool,
      toolVersion: report["@version"],
      scanType: "dast",
      findings,
      failure,
      coverage: { parts, partFailed: false },
    };
  },
};
