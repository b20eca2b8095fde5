// Property (issue 60): a structurally broken report of any format (a valid one mutated at one
// place of one level, test/helpers/fuzz/broken-reports.ts), uploaded to an application that has
// open findings of every format's tool, is answered 400 problem+json, never a 5xx and never a scan:
// nothing is resolved and no scan is created. The seed is fixed (FUZZ_SEED=random, or a number,
// picks others); FUZZ_RUNS sets the number of batches of 4 reports (default 100).
import fc from "fast-check";
import { brokenReport, describeBroken } from "../helpers/fuzz/broken-reports.ts";
import { REPORT_FORMAT_NAMES, validReport } from "../helpers/scanner-reports.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";

const FIXED_SEED = 20_261_201;
const REPORTS_PER_RUN = 4;

let t: TestApp;
let app: string;
let openBefore: number;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0", RATE_LIMIT_PER_MINUTE: "100000000" });
  app = (await t.request("POST", "/applications", { body: { name: "broken-reports" } })).body.id;
  for (const format of REPORT_FORMAT_NAMES) {
    const res = await t.request("POST", `/applications/${app}/scan-reports`, {
      rawBody: JSON.stringify(validReport(format, [1001, 1002, 1003, 1004])),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(202);
  }
  openBefore = await t.app.db.prisma.vulnerability.count({ where: { applicationId: app, status: "open" } });
  expect(openBefore).toBe(REPORT_FORMAT_NAMES.length * 4);
});
afterAll(() => t.close());

it("refuses every broken report with a 400, creating no scan and resolving nothing", async () => {
  const value = process.env.FUZZ_SEED;
  const seed = !value ? FIXED_SEED : value === "random" ? Math.floor(Math.random() * 2 ** 31) : Number(value);
  if (value === "random") console.log(`broken reports: FUZZ_SEED=${seed}`);
  const numRuns = Number(process.env.FUZZ_RUNS ?? 100);
  const scans = await t.app.db.prisma.scan.count({ where: { applicationId: app } });
  const seen = new Set<string>();

  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(brokenReport(), fc.boolean()), { minLength: REPORTS_PER_RUN, maxLength: REPORTS_PER_RUN }),
      async (reports) => {
        const answers = await Promise.all(
          reports.map(([report, named]) =>
            t.request("POST", `/applications/${app}/scan-reports${named ? `?format=${report.format}` : ""}`, {
              rawBody: JSON.stringify(report.document),
              headers: { "content-type": "application/json" },
            }),
          ),
        );
        const broken = answers.flatMap((res, i) => {
          const [report] = reports[i]!;
          seen.add(`${report.format} ${report.how} ${report.path.length}`);
          const problem =
            res.status !== 400
              ? `status ${res.status}`
              : !(res.headers.get("content-type") ?? "").startsWith("application/problem+json")
                ? "not problem+json"
                : null;
          return problem ? [`${problem} for a ${describeBroken(report)}: ${res.text.slice(0, 300)}`] : [];
        });
        if (broken.length) throw new Error(broken.join("\n"));
        const [open, scansNow] = await Promise.all([
          t.app.db.prisma.vulnerability.count({ where: { applicationId: app, status: "open" } }),
          t.app.db.prisma.scan.count({ where: { applicationId: app } }),
        ]);
        if (open !== openBefore || scansNow !== scans)
          throw new Error(
            `after ${reports.map(([r]) => describeBroken(r)).join("; ")}: ${open} open, ${scansNow} scans`,
          );
      },
    ),
    { numRuns, seed, endOnFailure: true },
  );

  expect(await t.app.db.prisma.event.count({ where: { applicationId: app, type: "vulnerability.resolved" } })).toBe(0);
  // Every format broken at several levels, both ways.
  for (const format of REPORT_FORMAT_NAMES) {
    expect([...seen].filter((s) => s.startsWith(`${format} wrong type`)).length).toBeGreaterThan(3);
    expect([...seen].some((s) => s.startsWith(`${format} removed`))).toBe(true);
  }
}, 300_000);
