// Reading a report from its bytes: a SARIF log streamed (its results checked, then mapped, one at a
// time, in batches) must come to exactly what reading the whole document gives, wherever in a run
// its tool, artifacts and provenance are written, and must refuse what the whole reading refuses,
// naming the same places.
import type * as Sarif from "sarif";
import { unsafeInput } from "../../../src/domain/validation.ts";
import { DomainError } from "../../../src/errors.ts";
import { jsonPointer } from "../../../src/scans/reports/json-pointer.ts";
import { FINDINGS_PER_BATCH, readReportBytes } from "../../../src/scans/reports/read-report-bytes.ts";
import { readReport } from "../../../src/scans/reports/read-report.ts";

const COMMIT = "9b2e61f0c4d3a2b1e0f9d8c7b6a5f4e3d2c1b0a9";

const rules: Sarif.ReportingDescriptor[] = Array.from({ length: 7 }, (_, i) => ({
  id: `demo/rule-${i}`,
  shortDescription: { text: `Rule ${i} — ünïcode title` },
  properties: { tags: ["security", `external/cwe/cwe-${20 + i}`], "security-severity": String(2 + i) },
}));

function result(i: number, run: number): Sarif.Result {
  return {
    ruleId: `demo/rule-${i % 7}`,
    ...(i % 3 === 0 ? { ruleIndex: i % 7 } : {}),
    ...(i % 11 === 0 ? { kind: "pass" as const } : {}),
    message: { text: `Result ${i} of run ${run}: ${"é".repeat(i % 50)}` },
    locations: [
      {
        physicalLocation: {
          artifactLocation: i % 2 === 0 ? { index: i % 4 } : { uri: `lib/m${i % 13}.ts` },
          region: { startLine: (i % 90) + 1 },
        },
      },
    ],
    // Every 500th result repeats the one before it: one finding, however many times it is reported.
    partialFingerprints: { primaryLocationLineHash: `${run}:${i - (i % 500 === 1 ? 1 : 0)}` },
  };
}

/**
 * Two runs of 6,500 results: the first with its artifacts and provenance written after its
 * results, the second with its results before its tool.
 */
function twoRunLog(): Sarif.Log {
  const artifacts = Array.from({ length: 4 }, (_, i) => ({ location: { uri: `src/file-${i}.js` } }));
  const results = (run: number) => Array.from({ length: 6_500 }, (_, i) => result(i, run));
  return {
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "DemoScan", version: "2.0.1", rules } },
        results: results(0),
        artifacts,
        versionControlProvenance: [{ repositoryUri: "https://git.example.test/app", revisionId: COMMIT }],
      },
      { results: results(1), artifacts, tool: { driver: { name: "DemoScan", rules } } },
    ],
  };
}

const bytesOf = (document: unknown) => Buffer.from(JSON.stringify(document));

/** The validation errors readReportBytes throws (fails when it accepts the bytes or throws anything else). */
function refusal(bytes: Buffer, format?: string) {
  try {
    readReportBytes(bytes, format);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return (error as DomainError).details.errors ?? [];
  }
  throw new Error("readReportBytes accepted the report");
}

/** The JSON Pointers of what reading the whole document refuses, sorted. */
function wholeRefusalPaths(document: unknown): string[] {
  try {
    readReport(JSON.parse(JSON.stringify(document)));
  } catch (error) {
    return ((error as DomainError).details.errors ?? []).map((e) => e.path).sort();
  }
  throw new Error("readReport accepted the document");
}

describe("a SARIF log read as a stream", () => {
  it("comes to the same report and findings as the whole log, in batches", () => {
    const log = twoRunLog();
    const whole = readReport(JSON.parse(JSON.stringify(log)));
    const reading = readReportBytes(bytesOf(log), undefined);
    const batches: Sarif.Result[][] = [];
    const iterator = reading.batches();
    for (let next = iterator.next(); !next.done; next = iterator.next()) batches.push(next.value as never);

    expect(reading.report).toEqual({
      format: "sarif",
      tool: "DemoScan",
      toolVersion: "2.0.1",
      scanType: "sast",
      failure: null,
      coverage: { parts: [JSON.stringify(["DemoScan", ""])], partFailed: false },
    });
    const informational = log.runs.flatMap((run) => run.results ?? []).filter((r) => r.kind === "pass").length;
    expect(informational).toBeGreaterThan(0);
    expect(batches.map((b) => b.length)).toEqual([
      FINDINGS_PER_BATCH,
      FINDINGS_PER_BATCH,
      13_000 - informational - 2 * FINDINGS_PER_BATCH,
    ]);
    expect(batches.flat()).toEqual(whole.findings);
    // What the first run's outline carries after its results (artifacts, provenance) reached its findings.
    const second = whole.findings.find((f) => f.description.startsWith("Result 2 of run 0:"));
    expect(second).toMatchObject({ introducedIn: `commit ${COMMIT}`, location: "src/file-2.js:3" });
  });

  it("names a result's schema violation by its run and index, with the outline's own", () => {
    const log = twoRunLog();
    (log.runs[1]!.results![2] as { level: string }).level = "catastrophic";
    delete (log.runs[0]!.tool.driver as { name?: string }).name;
    const paths = refusal(bytesOf(log)).map((e) => e.path);
    expect(paths).toContain("/runs/1/results/2/level");
    expect(paths).toContain("/runs/0/tool/driver/name");
    expect(paths.sort()).toEqual(wholeRefusalPaths(log));
  });

  it("refuses results that are not objects, or not in an array, as the whole reading does", () => {
    const log = twoRunLog() as unknown as { runs: { results: unknown }[] };
    log.runs[0]!.results = [1, "two", null];
    log.runs[1]!.results = { first: { message: { text: "m" } } };
    const paths = refusal(bytesOf(log)).map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(["/runs/0/results/0", "/runs/0/results/1", "/runs/0/results/2", "/runs/1/results"]),
    );
    expect(paths.sort()).toEqual(wholeRefusalPaths(log));
  });

  it("gives at most 20 errors however many results are wrong", () => {
    const log = twoRunLog();
    for (const r of log.runs[0]!.results!.slice(0, 40)) (r as { level: string }).level = "loud";
    expect(refusal(bytesOf(log))).toHaveLength(20);
  });

  it("refuses unsafe text and deep nesting inside a result with their JSON Pointers", () => {
    const log = twoRunLog();
    const text = JSON.stringify(log).replace('"Result 1 of run 0: ', '"Result 1 of run 0: \\udfff');
    expect(refusal(Buffer.from(text))).toEqual([
      { path: "/runs/0/results/1/message/text", message: expect.stringContaining("lone UTF-16 surrogate") },
    ]);

    const nested = (depth: number) =>
      `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"properties":{"deep":${"[".repeat(depth)}${"]".repeat(depth)}}}]}]}`;
    const [tooDeep] = refusal(Buffer.from(nested(100_000)));
    expect(tooDeep).toEqual(unsafeInput(JSON.parse(nested(70)), jsonPointer));
    expect(tooDeep!.path).toMatch(/^\/runs\/0\/results\/0\/properties\/deep(\/0)+$/);
  });

  it("takes what is not one JSON document for a SyntaxError, and trailing white space for nothing", () => {
    const text = JSON.stringify(twoRunLog());
    for (const broken of ["", text.slice(0, -1), `${text} x`, text.slice(0, text.length / 2)]) {
      expect(() => readReportBytes(Buffer.from(broken), undefined)).toThrow(SyntaxError);
    }
    expect(readReportBytes(Buffer.from(`${text} \n\t `), undefined).report.tool).toBe("DemoScan");
  });

  it("does not take a document for SARIF because it has runs with results", () => {
    const notSarif = { runs: [{ tool: { driver: { name: "x" } }, results: [{ message: { text: "m" } }] }] };
    expect(refusal(bytesOf(notSarif))).toEqual([
      { path: "", message: expect.stringContaining("Not a report of a known format") },
    ]);
    expect(refusal(bytesOf(notSarif), "sarif").map((e) => e.path)).toEqual(["/version"]);
  });
});
