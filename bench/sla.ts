// Remediation deadlines at scale (issue 62): 1,000,000 vulnerabilities over 2,000 applications (500
// each, every severity and status, found over the last 400 days, a resolution with its history for
// each resolved one). Five alternated rounds of: `PUT /sla` (two documents in turn); the portfolio's
// `GET /remediation-metrics` beside one bare statement computing the same figures (the service's
// own SQL, from this process); an application's first page with `sla=breached` beside its
// unfiltered first page. Then the service's CPU over 60 s with nothing due (the deadline watcher
// ticking every 15 s, its default) beside the same service on an empty database, and a burst of 10,000 deadlines passing in the same second:
// how long after it until the last `vulnerability.sla_breached` is in the log.
import { setTimeout as sleep } from "node:timers/promises";
import { AGGREGATES_SQL } from "../src/domain/sla/remediation-metrics.ts";
import { startBenchService } from "./bench-service.ts";
import { cpuSeconds } from "./cpu-time.ts";

const APPLICATIONS = 2_000;
const PER_APPLICATION = 500;
const ROUNDS = 5;
const BURST = 10_000;
const DAY_MS = 86_400_000;

// A random UUID marked version 7, as the service's ids are (it answers 404 to any other).
const ID = `overlay(gen_random_uuid()::text placing '7' from 15)::uuid`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

export async function runSlaBench(): Promise<void> {
  const bench = await startBenchService();
  // The baseline of the idle figure: the same service on an empty database, idle over the same minute.
  const bareService = await startBenchService();
  const { pool } = bench.db;
  const call = async (method: string, path: string, body?: unknown) => {
    const started = performance.now();
    const res = await fetch(bench.service.baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${bench.token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
    return performance.now() - started;
  };
  try {
    const seeded = performance.now();
    await pool.query(`
      INSERT INTO applications (id, name, criticality, owner, tags, created_at, updated_at)
      SELECT ${ID}, 'app-' || i, (enum_range(NULL::"Criticality"))[1 + i % 4], 'team-' || (i % 50), '{}', now(), now()
        FROM generate_series(1, ${APPLICATIONS}) i`);
    await pool.query(`
      INSERT INTO scans (id, application_id, scan_type, status, created_at)
      SELECT ${ID}, id, 'sca', 'completed', now() FROM applications`);
    // One transaction, so that the deadline watcher never sees the deadlines already past.
    const seed = await pool.connect();
    try {
      await seed.query("BEGIN");
      // Found at random minutes over the last 400 days; a tenth resolved (some time after), a tenth accepted.
      await seed.query(`
        INSERT INTO vulnerabilities (id, application_id, scan_id, scan_type, fingerprint, title, description, severity,
                                     cwe, cvss_score, status, introduced_in, remediation, resolved_at, created_at, updated_at)
        SELECT ${ID}, s.application_id, s.id, 'sca', 'f-' || i, 'Finding ' || i, 'A finding', (enum_range(NULL::"Severity"))[1 + i % 4],
               'CWE-79', 5.0, CASE i % 10 WHEN 0 THEN 'resolved' WHEN 1 THEN 'accepted' ELSE 'open' END::"VulnerabilityStatus",
               'main', 'Upgrade', CASE WHEN i % 10 = 0 THEN now() - f.age * (i % 7) / 7 END, now() - f.age, now()
          FROM scans s CROSS JOIN generate_series(1, ${PER_APPLICATION}) i
          CROSS JOIN LATERAL (SELECT (abs(hashtext(s.id::text || i)) % 576000) * interval '1 minute' AS age) f`);
      await seed.query(`
        INSERT INTO vulnerability_changes (vulnerability_id, at, from_status, to_status, source)
        SELECT id, created_at, NULL::"VulnerabilityStatus", 'open'::"VulnerabilityStatus", 'report'::"ChangeSource" FROM vulnerabilities
         UNION ALL
        SELECT id, resolved_at, 'open', 'resolved', 'report' FROM vulnerabilities WHERE status = 'resolved'`);
      // The deadlines already past were told before the run.
      await seed.query(`
        UPDATE sla_deadlines d SET told = true FROM vulnerabilities v
         WHERE v.id = d.vulnerability_id
           AND v.sla_clock_base + (CASE v.severity WHEN 'critical' THEN 7 WHEN 'high' THEN 30 WHEN 'medium' THEN 90 ELSE 120 END) * interval '1 day' <= now()`);
      await seed.query("COMMIT");
    } finally {
      seed.release();
    }
    await pool.query("VACUUM ANALYZE");
    const { rows: counts } = await pool.query<{ all: number; open: number; deadlines: number }>(
      `SELECT (SELECT count(*)::int FROM vulnerabilities) AS all,
              (SELECT count(*)::int FROM vulnerabilities WHERE status = 'open') AS open,
              (SELECT count(*)::int FROM sla_deadlines WHERE NOT told) AS deadlines`,
    );
    console.log(
      `seeded ${counts[0]!.all} vulnerabilities (${counts[0]!.open} open, ${counts[0]!.deadlines} deadlines to come) in ${((performance.now() - seeded) / 1000).toFixed(1)} s`,
    );
    const [{ id: app }] = (await pool.query<{ id: string }>("SELECT id FROM applications ORDER BY name LIMIT 1"))
      .rows as [{ id: string }];

    const documents = [{ days: { critical: 10, high: 45 } }, { days: { critical: 7, high: 30 } }];
    const put: number[] = [];
    const metrics: number[] = [];
    const bare: number[] = [];
    const breachedPage: number[] = [];
    const firstPage: number[] = [];
    const bareMetrics = async () => {
      const started = performance.now();
      await pool.query(AGGREGATES_SQL, [null, null, null, new Date(Date.now() - 90 * DAY_MS), new Date()]);
      return performance.now() - started;
    };
    for (let round = 0; round < ROUNDS; round++) {
      put.push(await call("PUT", "/sla", documents[round % 2]));
      if (round % 2 === 0) {
        metrics.push(await call("GET", "/remediation-metrics"));
        bare.push(await bareMetrics());
      } else {
        bare.push(await bareMetrics());
        metrics.push(await call("GET", "/remediation-metrics"));
      }
      const [a, b] = round % 2 === 0 ? ["breached", "plain"] : ["plain", "breached"];
      for (const which of [a, b]) {
        const took = await call(
          "GET",
          `/applications/${app}/vulnerabilities?limit=20${which === "breached" ? "&sla=breached" : ""}`,
        );
        (which === "breached" ? breachedPage : firstPage).push(took);
      }
    }
    await call("PUT", "/sla", {});
    const ratio = (a: number[], b: number[]) => (median(a) / median(b)).toFixed(2);
    console.log(`PUT /sla: ${put.map(ms).join(", ")}; median ${ms(median(put))} (bound 1 s)`);
    console.log(
      `remediation metrics (portfolio): ${metrics.map(ms).join(", ")}; bare statement ${bare.map(ms).join(", ")}; ` +
        `median ratio ${ratio(metrics, bare)}× (bound 2×)`,
    );
    console.log(
      `first page sla=breached: ${breachedPage.map(ms).join(", ")}; unfiltered ${firstPage.map(ms).join(", ")}; ` +
        `median ratio ${ratio(breachedPage, firstPage)}× (bound 2×)`,
    );

    // Idle: nothing due but what passes in a minute as it would in such a portfolio (the burst's
    // rows come later), beside the bare service over the same minute.
    const pids = [bench.service.child.pid!, bareService.service.child.pid!];
    const before = pids.map((pid) => cpuSeconds([pid]));
    await sleep(60_000);
    const [idle, baseline] = pids.map((pid, i) => ((cpuSeconds([pid]) - before[i]!) / 60) * 100) as [number, number];
    console.log(
      `service CPU over 60 s with nothing due: ${idle.toFixed(2)} % of one core; the bare service ${baseline.toFixed(2)} %; ` +
        `the difference ${(idle - baseline).toFixed(2)} % (bound 2 %)`,
    );

    // The burst: 10,000 open critical ones whose 7 days end 20 s from now, in one second.
    const dueAt = Date.now() + 20_000;
    await pool.query(
      `INSERT INTO vulnerabilities (id, application_id, scan_id, scan_type, fingerprint, title, description, severity,
                                    cwe, cvss_score, status, introduced_in, remediation, created_at, updated_at)
       SELECT ${ID}, a.id, s.id, 'sca', 'burst-' || i, 'Burst ' || i, 'A finding', 'critical', 'CWE-79', 9.0,
              'open', 'main', 'Upgrade', $1::timestamptz - interval '7 days' + (i % 1000) * interval '1 millisecond', now()
         FROM generate_series(1, ${BURST}) i
         CROSS JOIN (SELECT array_agg(id ORDER BY name) AS ids FROM applications WHERE criticality = 'medium') m
         JOIN applications a ON a.id = m.ids[1 + i % 100]
         JOIN scans s ON s.application_id = a.id`,
      [new Date(dueAt)],
    );
    let told = 0;
    while (told < BURST) {
      await sleep(250);
      told = (
        await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM events WHERE type = 'vulnerability.sla_breached' AND data ->> 'title' LIKE 'Burst %'",
        )
      ).rows[0]!.n;
      if (Date.now() > dueAt + 180_000) throw new Error(`only ${told} of the burst told in 180 s`);
    }
    console.log(
      `a burst of ${BURST} deadlines in one second: the last told ${((Date.now() - (dueAt + 1_000)) / 1000).toFixed(1)} s after it (bound 60 s)`,
    );
  } finally {
    await Promise.all([bench.stop(), bareService.stop()]);
  }
}
