// SARIF 2.1.0 (Semgrep, CodeQL, ESLint, Trivy's and Snyk's SARIF, …) → findings (docs/spec/CONTRACT.md §11).
// The log is checked against the OASIS schema first, so what follows may rely on its shape.
//
// How a SARIF log says what its tool did, run by run (OASIS SARIF 2.1.0, errata 01; the authors'
// reading in oasis-tcs/sarif-spec#398, #232 and #404):
// - "The tool failed": `run.results` absent or null (§3.14.23: "If the tool failed to start … or
//   failed to begin its analysis … results MAY be present, and if present SHALL be null"; absent
//   "SHALL default to null"); an invocation with `executionSuccessful: false` (§3.20.14) or a
//   `processStartFailureMessage` (§3.20.13); a `toolExecutionNotifications` or
//   `toolConfigurationNotifications` entry of level `error` (§3.20.21–22: it "SHALL mean that the
//   run failed. A SARIF consumer SHALL NOT assume that a failed run contains a complete set of
//   analysis results"). `runs: null` says the producer failed to write any run (§3.13.4). The
//   published schema allows neither null; the prose does, so both are read as failure, not refused.
//   GitHub's code scanning agrees: it refuses a run without `results`, and does not let an
//   unsuccessful execution close alerts (github/codeql-action#1393). So do the tools: ESLint's
//   formatter (@microsoft/eslint-formatter-sarif) writes a file it could not parse as an
//   error-level notification with executionSuccessful false ("the tool failed to complete its
//   task"); CodeQL reports extraction problems that leave the results valid as warnings
//   (github/codeql#6830).
// - "This part was not scanned": a run that is not in the log. A run's part is its tool and its
//   category, `automationDetails.id` but its last component (§3.17.3; GitHub's "category").
// - "Nothing found": a run that did not fail, with `results: []` (§3.14.23: "If the tool did not
//   detect any results, results SHALL be an empty array"). Results of kind pass, notApplicable or
//   informational, or with baselineState absent, are not findings either.
// So a failed run records nothing and resolves nothing; only the parts whose runs all completed
// resolve their tool's earlier findings; a log whose runs all failed says the tool failed.
import type * as Sarif from "sarif";
import type { Decision } from "../../domain/vulnerabilities/analysis.ts";
import type { Severity } from "../../domain/validation.ts";
import { canonicalIds } from "../../domain/vulnerabilities/vulnerability-ids.ts";
import type { Finding } from "../../domain/vulnerabilities/finding.ts";
import type { FieldError } from "../../errors.ts";
import type { ScanType } from "../engines/engine.ts";
import {
  clip,
  cveOf,
  cvssScoreFor,
  cweOf,
  fingerprintOf,
  severityOfScore,
  TEXT_MAX,
  titleOf,
} from "./finding-rules.ts";
import { jsonPointer } from "./json-pointer.ts";
import { MAX_ERRORS, schemaCheck, type SchemaCheck } from "./json-schema-check.ts";
import { isObject, ReportInvalid, type ReadOptions, type ReportHeader, type ReportParser } from "./report.ts";
import { vendoredSchema } from "../../schemas/vendored-schema.ts";

const schemaDocument = () => vendoredSchema("sarif-2.1.0-rtm.5.json") as { id: string };
let checkLog: SchemaCheck | undefined;
let checkResult: SchemaCheck | undefined;
const sarifSchema = (): SchemaCheck => (checkLog ??= schemaCheck(schemaDocument(), { draft04: true }));
const resultSchema = (): SchemaCheck =>
  (checkResult ??= schemaCheck(
    { $ref: `${schemaDocument().id}#/definitions/result` },
    { draft04: true, references: [schemaDocument()] },
  ));

/**
 * A log's errors against the schema: a whole log, or the outline of a streamed one (its results
 * emptied). `runs: null` and a run's `results: null` are checked as absent: the prose allows them
 * (a failed tool), the schema does not.
 */
export function checkSarifLog(log: unknown): FieldError[] {
  if (!isObject(log)) return sarifSchema()(log);
  if (log["runs"] === null) return sarifSchema()({ ...log, runs: [] });
  const runs = log["runs"];
  if (!Array.isArray(runs) || !runs.some((run) => isObject(run) && run["results"] === null)) return sarifSchema()(log);
  return sarifSchema()({
    ...log,
    runs: runs.map((run) => {
      if (!isObject(run) || run["results"] !== null) return run;
      const { results: _null, ...rest } = run;
      return rest;
    }),
  });
}

/** One result's errors against the schema's `result` definition, named by their place in the log. */
export function checkSarifResult(result: unknown, run: number, index: number): FieldError[] {
  const at = jsonPointer(["runs", run, "results", index]);
  return resultSchema()(result).map((error) => ({ ...error, path: at + error.path }));
}

const LEVEL_SEVERITY: Record<Sarif.Result.level, Severity> = {
  error: "high",
  warning: "medium",
  note: "low",
  none: "low",
};

/** Kinds of results that report no problem: not findings, and left out before the schema's check (they may lack a message). */
const NOT_FINDINGS = new Set(["pass", "notApplicable", "informational"]);

/** A result that is not a finding: its kind says nothing is wrong (any value, checked or not, so that it is never refused). */
export const isNotAFinding = (result: unknown): boolean =>
  typeof result === "object" && result !== null && NOT_FINDINGS.has((result as { kind?: unknown }).kind as string);

/** Results that say nothing is wrong, or that the current run no longer has. */
function isInformational(result: Sarif.Result): boolean {
  if (result.kind !== undefined && result.kind !== "fail" && result.kind !== "open" && result.kind !== "review")
    return true;
  return result.baselineState === "absent";
}

/**
 * Its suppressions as a decision (docs/spec/CONTRACT.md §13), null when it is not suppressed: a `rejected`
 * suppression means the team decided not to suppress it; else one `underReview` makes it
 * in_triage; else (every one `accepted` or without a status) it is suppressed, not_affected.
 */
function suppressionOf(result: Sarif.Result): Decision | null {
  const suppressions = result.suppressions ?? [];
  if (suppressions.length === 0 || suppressions.some((s) => s.status === "rejected")) return null;
  const reasons = [...new Set(suppressions.flatMap((s) => (s.justification?.trim() ? [s.justification.trim()] : [])))];
  return {
    state: suppressions.some((s) => s.status === "underReview") ? "in_triage" : "not_affected",
    justification: null,
    detail: reasons.length > 0 ? clip(reasons.join("\n\n"), TEXT_MAX) : null,
    response: [],
  };
}

/** The rule a result refers to: by index into the driver or an extension, else by id. */
function ruleOf(run: Sarif.Run, result: Sarif.Result): Sarif.ReportingDescriptor | undefined {
  const components = [run.tool.driver, ...(run.tool.extensions ?? [])];
  const componentIndex = result.rule?.toolComponent?.index;
  const component = componentIndex === undefined ? run.tool.driver : run.tool.extensions?.[componentIndex];
  const index = result.rule?.index ?? result.ruleIndex;
  if (index !== undefined && index >= 0 && component?.rules?.[index]) return component.rules[index];
  const id = result.rule?.id ?? result.ruleId;
  if (id === undefined) return undefined;
  for (const c of components) {
    const rule = c.rules?.find((r) => r.id === id);
    if (rule) return rule;
  }
  return undefined;
}

/** A message's text: its own, else the rule's message string with the arguments put in. */
function messageText(message: Sarif.Message, rule: Sarif.ReportingDescriptor | undefined): string {
  if (message.text !== undefined) return message.text;
  const template = message.id !== undefined ? rule?.messageStrings?.[message.id]?.text : undefined;
  if (template === undefined) return message.markdown ?? "";
  return template.replace(/\{(\d+)\}/g, (whole, n: string) => message.arguments?.[Number(n)] ?? whole);
}

/** The `file://` URI prefix of a checkout path, POSIX (`/home/runner/work/app`) or Windows (`D:\\a\\app`). */
function fileUriPrefix(checkoutPath: string): string {
  const path = checkoutPath.replaceAll("\\", "/").replace(/\/+$/, "");
  return `file://${path.startsWith("/") ? "" : "/"}${encodeURI(path)}/`;
}

/** Where the result is: `path:line` (`location`), and the file alone (`path`), else a logical location's name. */
function locationOf(
  run: Sarif.Run,
  result: Sarif.Result,
  checkout: string | undefined,
): { location: string | null; path: string | null } {
  const physical = result.locations?.[0]?.physicalLocation;
  const artifact = physical?.artifactLocation;
  const uri =
    artifact?.uri ?? (artifact?.index !== undefined ? run.artifacts?.[artifact.index]?.location?.uri : undefined);
  if (uri === undefined) {
    const logical = result.locations?.[0]?.logicalLocations?.[0]?.fullyQualifiedName ?? null;
    return { location: logical, path: logical };
  }
  const path = checkout && uri.startsWith(checkout) ? uri.slice(checkout.length) : uri;
  const line = physical?.region?.startLine;
  return { location: line === undefined ? path : `${path}:${line}`, path };
}

/** `security-severity` is a CVSS-like score in a string ("8.8"); GitHub reads it the same way. */
function securitySeverity(...bags: (Sarif.PropertyBag | undefined)[]): number | null {
  for (const bag of bags) {
    const value = bag?.["security-severity"];
    const score =
      typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;
    if (severityOfScore(score)) return score;
  }
  return null;
}

function cwesOf(rule: Sarif.ReportingDescriptor | undefined, result: Sarif.Result): unknown[] {
  const tags = [...(rule?.properties?.tags ?? []), ...(result.properties?.tags ?? [])].filter((t) => /cwe/i.test(t));
  const cweProperty = rule?.properties?.["cwe"];
  const related = (rule?.relationships ?? [])
    .filter((r) => r.target.toolComponent?.name?.toUpperCase() === "CWE")
    .map((r) => r.target.id);
  return [...tags, ...(Array.isArray(cweProperty) ? cweProperty : [cweProperty]), ...related];
}

/**
 * The tool's fingerprints, with the file (not the line: a result that moves keeps its identity),
 * as GitHub matches them: CodeQL's primaryLocationLineHash hashes the line's text alone, so the
 * same code in two files has the same one. Else the rule and the location.
 */
function fingerprintParts(
  ruleId: string,
  result: Sarif.Result,
  where: { location: string | null; path: string | null },
): string[] {
  const stable = { ...result.fingerprints, ...result.partialFingerprints };
  const keys = Object.keys(stable).sort();
  if (keys.length === 0) return [ruleId, where.location ?? ""];
  return [ruleId, where.path ?? "", ...keys.map((k) => `${k}=${stable[k]}`)];
}

export const SARIF_INVALID = "The report is not a valid SARIF 2.1.0 log";

function findingOf(
  run: Sarif.Run,
  tool: string,
  result: Sarif.Result,
  commit: string | undefined,
  checkout: string | undefined,
  part: string,
): Finding {
  const rule = ruleOf(run, result);
  const ruleId = result.ruleId ?? result.rule?.id ?? rule?.id ?? "";
  const level = result.level ?? rule?.defaultConfiguration?.level ?? "warning";
  const score = securitySeverity(result.properties, rule?.properties);
  const severity = (score !== null ? severityOfScore(score) : null) ?? LEVEL_SEVERITY[level];
  const where = locationOf(run, result, checkout);
  const location = where.location;
  const message = messageText(result.message, rule);
  const ruleText = rule?.shortDescription?.text ?? rule?.name ?? (ruleId || message);
  return {
    fingerprint: fingerprintOf("sarif", tool, fingerprintParts(ruleId, result, where)),
    title: titleOf(ruleText) || "Untitled result",
    description: clip(message || ruleText, TEXT_MAX),
    severity,
    cwe: cweOf(cwesOf(rule, result)),
    cve: cveOf([ruleId]),
    cvssScore: cvssScoreFor(severity, score),
    introducedIn: commit ? `commit ${commit}` : (location ?? ruleId),
    remediation: clip(
      rule?.help?.text ??
        rule?.fullDescription?.text ??
        (rule?.helpUri ? `See ${rule.helpUri}` : "See the rule's documentation"),
      TEXT_MAX,
    ),
    packageName: null,
    packageVersion: null,
    location,
    aliases: canonicalIds([ruleId]),
    analysis: suppressionOf(result),
    part,
  };
}

/** Trivy, Grype and Snyk Open Source write SARIF too; their findings are about packages, not code. */
function scanTypeOf(run: Sarif.Run | undefined): ScanType {
  const name = run?.tool.driver.name.toLowerCase() ?? "";
  const aboutPackages =
    name.includes("trivy") || name.includes("grype") || (name.includes("snyk") && !name.includes("code"));
  if (!aboutPackages) return "sast";
  return run?.properties?.["imageName"] !== undefined ? "container" : "sca";
}

/** A log's runs, ready to read results against (a whole log, or the outline of a streamed one). */
export interface SarifRuns {
  report: ReportHeader;
  /** The finding of `runs[run]`'s result, or null when the result is informational or its run failed. */
  findingOf(run: number, result: Sarif.Result): Finding | null;
}

const FAILURE_TEXT_MAX = 500;
const REASON_MAX = 2_000;

/** A message's text as the log gives it (a notification's message may hold only an id). */
const quoted = (message: Sarif.Message | undefined): string =>
  JSON.stringify(clip(message?.text ?? message?.markdown ?? message?.id ?? "", FAILURE_TEXT_MAX));

/** Where `run` says it failed (see the top of this file); none when it completed. */
function runFailures(run: Sarif.Run, index: number): FieldError[] {
  const at = (...path: (string | number)[]) => jsonPointer(["runs", index, ...path]);
  const tool = run.tool.driver.name;
  const failures: FieldError[] = [];
  if (run.results === undefined || run.results === null) {
    failures.push({
      path: at("results"),
      message: `${tool}'s run has ${run.results === null ? "null results" : "no results"}: the tool did not complete its analysis`,
    });
  }
  (run.invocations ?? []).forEach((invocation, i) => {
    if (invocation.processStartFailureMessage !== undefined) {
      failures.push({
        path: at("invocations", i, "processStartFailureMessage"),
        message: `${tool} failed to start: ${JSON.stringify(clip(invocation.processStartFailureMessage, FAILURE_TEXT_MAX))}`,
      });
    }
    if (invocation.executionSuccessful === false) {
      const exit = invocation.exitCode !== undefined ? ` (exit code ${invocation.exitCode})` : "";
      failures.push({
        path: at("invocations", i, "executionSuccessful"),
        message: `${tool}'s invocation says executionSuccessful: false${exit}`,
      });
    }
    for (const key of ["toolExecutionNotifications", "toolConfigurationNotifications"] as const) {
      (invocation[key] ?? []).forEach((notification, k) => {
        if (notification.level !== "error") return;
        const what = key === "toolExecutionNotifications" ? "an error" : "a configuration error";
        failures.push({
          path: at("invocations", i, key, k),
          message: `${tool} reported ${what}: ${quoted(notification.message)}`,
        });
      });
    }
  });
  return failures;
}

/** The part of its tool's scan a run is: the tool and the run's category (all of automationDetails.id but its last component). */
function partOf(run: Sarif.Run): string {
  const id = run.automationDetails?.id ?? "";
  return JSON.stringify([run.tool.driver.name, id.includes("/") ? id.slice(0, id.lastIndexOf("/")) : ""]);
}

/** `log` must have passed checkSarifLog (its runs may be null: the producer wrote none). */
export function sarifRuns(log: Sarif.Log, options: ReadOptions = {}): SarifRuns {
  const runs = (log.runs as Sarif.Run[] | null) ?? [];
  const tool = [...new Set(runs.map((run) => run.tool.driver.name))].join(", ") || "SARIF";
  const first = runs[0]?.tool.driver;
  const checkout = options.checkoutPath ? fileUriPrefix(options.checkoutPath) : undefined;
  const commits = runs.map((run) => run.versionControlProvenance?.find((p) => p.revisionId)?.revisionId);
  const failures = runs.map(runFailures);
  const parts = runs.map(partOf);
  const failedParts = new Set(parts.filter((_, i) => failures[i]!.length > 0));
  const said = failures.flat();
  const allFailed = log.runs === null || (runs.length > 0 && failures.every((f) => f.length > 0));
  const failure = allFailed
    ? {
        reason: clip(
          `The report says the tool failed: ${log.runs === null ? "its runs are null: the tool wrote none" : said.map((f) => f.message).join("; ")}`,
          REASON_MAX,
        ),
        errors:
          log.runs === null
            ? [{ path: "/runs", message: "null: the tool failed to write any run" }]
            : said.slice(0, MAX_ERRORS),
      }
    : null;
  return {
    report: {
      format: "sarif",
      tool,
      toolVersion: first?.semanticVersion ?? first?.version ?? null,
      scanType: scanTypeOf(runs[0]),
      failure,
      // No runs: no part was scanned, and none failed.
      coverage: {
        parts: [...new Set(parts.filter((part) => !failedParts.has(part)))],
        partFailed: failedParts.size > 0,
      },
    },
    findingOf: (run, result) => {
      if (failures[run]!.length > 0 || isInformational(result)) return null;
      return findingOf(runs[run]!, tool, result, commits[run], checkout, parts[run]!);
    },
  };
}

export const sarifReport: ReportParser = {
  format: "sarif",

  // Whatever its runs hold, so that a log with broken runs is refused for them, not as of no known format.
  detect: (document) =>
    isObject(document) &&
    "runs" in document &&
    (document["version"] === "2.1.0" || /sarif/i.test(String(document["$schema"] ?? ""))),

  parse(document, options: ReadOptions = {}) {
    // As the streamed reading does: the log without its results against the whole schema, then
    // each result that may be a finding against the schema's `result`.
    const runs = isObject(document) && Array.isArray(document["runs"]) ? (document["runs"] as unknown[]) : [];
    const results = runs.map((run) =>
      isObject(run) && Array.isArray(run["results"]) ? (run["results"] as unknown[]) : [],
    );
    // Runs that are not an array stay as they are, for the schema to refuse.
    const outline =
      isObject(document) && Array.isArray(document["runs"])
        ? {
            ...(document as object),
            runs: runs.map((run, i) => (results[i]!.length > 0 ? { ...(run as object), results: [] } : run)),
          }
        : document;
    const errors = [
      ...checkSarifLog(outline),
      ...results.flatMap((list, run) => list.flatMap((r, i) => (isNotAFinding(r) ? [] : checkSarifResult(r, run, i)))),
    ];
    if (errors.length > 0) throw new ReportInvalid(SARIF_INVALID, errors.slice(0, MAX_ERRORS));
    const { report, findingOf } = sarifRuns(outline as unknown as Sarif.Log, options);
    const findings = results.flatMap((list, run) =>
      list.flatMap((result) => (isNotAFinding(result) ? [] : (findingOf(run, result as Sarif.Result) ?? []))),
    );
    return { ...report, findings };
  },
};
