// The SLA clock (docs/spec/CONTRACT.md §19) as a property: for any life of a vulnerability (found,
// moved between open and in progress, accepted and opened again, resolved, found again, each at any
// moment) under any SLA, the deadline and the state the service answers equal those of a plain model
// written here: the clock starts when it is found (again, after resolved), time spent accepted does
// not count, and the SLA is applied when asked. The writes are the database's own (its trigger keeps
// the clock, whatever the writer), made with the moments they happened at.
import fc from "fast-check";
import { slaOf } from "../../src/domain/sla/sla-clock.ts";
import { slaDocumentSchema } from "../../src/domain/sla/sla.schemas.ts";
import { startTestApp, type TestApp } from "../helpers/test-app.ts";
import { cyclonedxReport } from "../helpers/vex-documents.ts";

let t: TestApp;
let app: string;
let template: string;
beforeAll(async () => {
  t = await startTestApp({ SCAN_DURATION_MS: "0" });
  app = (await t.request("POST", "/applications", { body: { name: "clock", criticality: "high" } })).body.id;
  const report = cyclonedxReport([{ id: "CVE-2021-44228", purl: "pkg:npm/a@1.0.0", severity: "critical" }]);
  await t.request("POST", `/applications/${app}/scan-reports`, {
    rawBody: JSON.stringify(report),
    headers: { "content-type": "application/vnd.cyclonedx+json" },
  });
  template = (await t.request("GET", `/applications/${app}/vulnerabilities`)).body[0].id;
});
afterAll(() => t.close());

type Status = "open" | "in_progress" | "accepted" | "resolved";
const DAY_MS = 86_400_000;
const T0 = Date.parse("2026-01-01T00:00:00Z");

/** What may follow each status: the moves a scan, a VEX or an expiry makes. */
const NEXT: Record<Status, Status[]> = {
  open: ["in_progress", "accepted", "resolved"],
  in_progress: ["open", "accepted", "resolved"],
  accepted: ["open", "in_progress", "resolved"],
  resolved: ["open", "in_progress"],
};

/** The model: the clock as intervals of time that count. */
function model(steps: { status: Status; at: number }[], days: number, dueSoonDays: number, now: number) {
  let start = T0;
  let accepted = 0;
  let pausedSince: number | null = null;
  let status: Status = "open";
  let resolvedAt: number | null = null;
  for (const step of steps) {
    if (status === "resolved" && step.status !== "resolved") {
      start = step.at;
      accepted = 0;
      resolvedAt = null;
    }
    if (status === "accepted") {
      accepted += step.at - pausedSince!;
      pausedSince = null;
    }
    if (step.status === "accepted") pausedSince = step.at;
    if (step.status === "resolved") resolvedAt = step.at;
    status = step.status;
  }
  if (status === "accepted") return { dueAt: null, state: "paused" };
  const due = start + accepted + Math.floor(days * DAY_MS);
  const state =
    status === "resolved"
      ? resolvedAt! < due
        ? "met"
        : "missed"
      : now >= due
        ? "breached"
        : now >= due - Math.floor(dueSoonDays * DAY_MS)
          ? "due_soon"
          : "on_track";
  return { dueAt: new Date(due).toISOString(), state };
}

const life = fc
  .array(fc.tuple(fc.nat({ max: 2 }), fc.integer({ min: 1, max: 20 * DAY_MS })), { maxLength: 12 })
  .map((moves) => {
    let status: Status = "open";
    let at = T0;
    return moves.map(([choice, gap]) => {
      const options = NEXT[status];
      status = options[choice % options.length]!;
      at += gap;
      return { status, at };
    });
  });

it("gives every life of a vulnerability the model's deadline and state, under any SLA", async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      life,
      fc.double({ min: 0.01, max: 60, noNaN: true }),
      fc.double({ min: 0.01, max: 10, noNaN: true }),
      fc.integer({ min: 0, max: 400 * DAY_MS }),
      async (steps, days, dueSoonDays, later) => {
        const id = crypto.randomUUID();
        const client = await t.app.db.pool.connect();
        try {
          await client.query(
            `INSERT INTO vulnerabilities
             SELECT (jsonb_populate_record(v, jsonb_build_object(
                       'id', $2::uuid, 'fingerprint', $3::text, 'status', 'open',
                       'created_at', $4::timestamptz, 'updated_at', $4::timestamptz, 'resolved_at', NULL))).*
               FROM vulnerabilities v WHERE v.id = $1`,
            [template, id, `clock-${run++}`, new Date(T0)],
          );
          for (const step of steps) {
            await client.query(
              `UPDATE vulnerabilities SET status = $2::"VulnerabilityStatus", updated_at = $3,
                      resolved_at = CASE WHEN $2 = 'resolved' THEN $3::timestamptz END
                WHERE id = $1`,
              [id, step.status, new Date(step.at)],
            );
          }
        } finally {
          client.release();
        }
        const sla = slaDocumentSchema.parse({
          days: { critical: 7 },
          byCriticality: { high: { critical: days } },
          dueSoonDays,
        });
        const now = (steps.at(-1)?.at ?? T0) + later;
        const row = await t.app.db.prisma.vulnerability.findUniqueOrThrow({ where: { id } });
        expect(slaOf(row, "high", sla, new Date(now))).toEqual(model(steps, days, dueSoonDays, now));
        await t.app.db.prisma.vulnerability.delete({ where: { id } });
      },
    ),
    { numRuns: 150 },
  );
});
