import { catalogue, parseCatalogue } from "../../src/scans/engines/catalogue.ts";
import { SCAN_TYPES } from "../../src/domain/scans/scans.schemas.ts";
import { createEngines } from "../../src/scans/engines/create-engines.ts";
import type { Finding, ScannerEngine, ScanTarget, ScanType } from "../../src/scans/engines/engine.ts";
import { createSimulatorEngine, simulatedPopulation } from "../../src/scans/engines/simulator.ts";

// Written out here rather than imported, so a wrong band in the code fails these tests.
const CVSS_BANDS = {
  low: [0.1, 3.9],
  medium: [4.0, 6.9],
  high: [7.0, 8.9],
  critical: [9.0, 10.0],
} as const;

// Fixed ids keep every run identical: the simulator is deterministic, so these tests are too.
const uuid = (prefix: string, n: number) => `${prefix}-0000-7000-8000-${String(n).padStart(12, "0")}`;
const APP_IDS = Array.from({ length: 12 }, (_, i) => uuid("0190a000", i));
const SCAN_IDS = Array.from({ length: 20 }, (_, i) => uuid("0190b000", i));
const [APP_ID] = APP_IDS as [string];

function target(scanType: ScanType, overrides: Partial<ScanTarget> = {}): ScanTarget {
  return {
    applicationId: APP_ID,
    applicationName: "payments-api",
    scanType,
    scanId: SCAN_IDS[0]!,
    language: "TypeScript",
    repoUrl: "https://git.example.com/acme/payments-api",
    serviceUrl: "https://payments.example.com",
    ...overrides,
  };
}

const fingerprints = (findings: readonly Finding[]) => findings.map((f) => f.fingerprint).sort();

async function scanRepeatedly(engine: ScannerEngine, applicationId: string): Promise<Finding[][]> {
  const scans: Finding[][] = [];
  for (const scanId of SCAN_IDS) scans.push(await engine.scan(target(engine.scanType, { applicationId, scanId })));
  return scans;
}

describe.each(SCAN_TYPES)("simulator engine: %s", (scanType) => {
  const engine = createSimulatorEngine(scanType, { durationMs: 0 });
  const populationOf = (applicationId: string, language: string | null = "TypeScript") =>
    simulatedPopulation({ applicationId, scanType, language });

  it("has a stable population of 6 to 14 distinct findings", () => {
    const population = populationOf(APP_ID);
    expect(population.length).toBeGreaterThanOrEqual(6);
    expect(population.length).toBeLessThanOrEqual(14);
    expect(new Set(fingerprints(population)).size).toBe(population.length);
    expect(populationOf(APP_ID)).toEqual(population);
  });

  it("reports the same finding, with the same fingerprint, on every scan", async () => {
    const population = new Map(populationOf(APP_ID).map((f) => [f.fingerprint, f]));
    for (const findings of await scanRepeatedly(engine, APP_ID)) {
      for (const finding of findings) expect(finding).toEqual(population.get(finding.fingerprint));
    }
  });

  it("gives different applications different populations", () => {
    const populations = APP_IDS.map((id) => populationOf(id));
    const fingerprintSets = populations.map((population) => fingerprints(population).join());
    expect(new Set(fingerprintSets).size).toBe(APP_IDS.length);
    // Not only other locations: other catalogue entries too.
    const entrySets = populations.map((population) =>
      population
        .map((f) => f.title)
        .sort()
        .join("|"),
    );
    expect(new Set(entrySets).size).toBeGreaterThan(APP_IDS.length / 2);
  });

  it("reports at least one finding and at least 70% of the population on every scan", async () => {
    for (const applicationId of APP_IDS.slice(0, 4)) {
      const populationSize = populationOf(applicationId).length;
      for (const findings of await scanRepeatedly(engine, applicationId)) {
        expect(findings.length).toBeGreaterThanOrEqual(1);
        expect(findings.length * 10).toBeGreaterThanOrEqual(populationSize * 7);
      }
    }
  });

  it("over 20 scans reports every finding at least once and misses one at least once", async () => {
    for (const applicationId of APP_IDS.slice(0, 4)) {
      const population = fingerprints(populationOf(applicationId));
      const scans = await scanRepeatedly(engine, applicationId);
      const everReported = new Set(scans.flatMap(fingerprints));
      expect([...everReported].sort()).toEqual(population);
      expect(scans.some((findings) => findings.length < population.length)).toBe(true);
    }
  });

  it("produces well-formed findings", () => {
    const findings = APP_IDS.flatMap((id) => populationOf(id));
    for (const f of findings) {
      const [min, max] = CVSS_BANDS[f.severity];
      expect(f.cvssScore).toBeGreaterThanOrEqual(min);
      expect(f.cvssScore).toBeLessThanOrEqual(max);
      expect(Math.round(f.cvssScore * 10) / 10).toBe(f.cvssScore);
      expect(f.cwe).toMatch(/^CWE-\d+$/);
      expect(f.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      for (const text of [f.title, f.description, f.remediation, f.introducedIn]) expect(text.trim()).not.toBe("");

      if (scanType === "sca" || scanType === "container") {
        expect(f.cve).toMatch(/^CVE-\d{4}-\d{4,}$/);
        expect(f.packageName).toEqual(expect.any(String));
        expect(f.packageVersion).toEqual(expect.any(String));
        expect(f.introducedIn).toMatch(scanType === "sca" ? /^\S+@\S+$/ : /^FROM \S+:\S+$/);
      } else {
        expect(f.cve).toBeNull();
        expect(f.packageName).toBeNull();
        expect(f.packageVersion).toBeNull();
        expect(f.introducedIn).toMatch(/^commit [0-9a-f]{7}$/);
      }
      const locationShape = {
        sast: /^[\w./-]+:\d+$/,
        dast: /^\//,
        sca: /^pkg:(npm|pypi|maven|golang)\/\S+@\S+$/,
        container: /^\S+:\S+ layer sha256:[0-9a-f]{12} \S+@\S+$/,
      }[scanType];
      expect(f.location).toMatch(locationShape);
    }
  });
});

describe("simulator language awareness", () => {
  it("places sast findings in files of the application's language", () => {
    const goFindings = simulatedPopulation({ applicationId: APP_ID, scanType: "sast", language: "Go" });
    for (const f of goFindings) expect(f.location).toMatch(/\.go:\d+$/);
    const pythonFindings = simulatedPopulation({ applicationId: APP_ID, scanType: "sast", language: "Python 3.12" });
    for (const f of pythonFindings) expect(f.location).toMatch(/^app\/.*\.(py|html):\d+$/);
  });

  it("draws sca findings from the application's ecosystem first", () => {
    const pypiEntries = catalogue.sca.filter((entry) => entry.ecosystem === "pypi").length;
    for (const applicationId of APP_IDS) {
      const population = simulatedPopulation({ applicationId, scanType: "sca", language: "python" });
      const pypiFindings = population.filter((f) => f.location?.startsWith("pkg:pypi/")).length;
      expect(pypiFindings).toBe(Math.min(population.length, pypiEntries));
    }
  });
});

describe("scan duration and cancellation", () => {
  it("takes durationMs before reporting", async () => {
    const engine = createSimulatorEngine("sast", { durationMs: 100 });
    const started = performance.now();
    await engine.scan(target("sast"));
    // Timers may fire a millisecond early; the margin only has to tell "waited" from "instant".
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
  });

  it("rejects promptly when aborted mid-scan", async () => {
    const engine = createSimulatorEngine("dast", { durationMs: 60_000 });
    const controller = new AbortController();
    const started = performance.now();
    const scan = engine.scan(target("dast"), controller.signal);
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(scan).rejects.toMatchObject({ name: "AbortError" });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("rejects at once when the signal is already aborted", async () => {
    const engine = createSimulatorEngine("sca", { durationMs: 60_000 });
    const started = performance.now();
    await expect(engine.scan(target("sca"), AbortSignal.abort())).rejects.toMatchObject({ name: "AbortError" });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("refuses a target of another scan type", async () => {
    const engine = createSimulatorEngine("sca", { durationMs: 0 });
    await expect(engine.scan(target("dast"))).rejects.toThrow("The sca engine cannot run a dast scan");
  });
});

describe("createEngines", () => {
  it("provides a simulator for every scan type", async () => {
    const engines = createEngines({ durationMs: 0 });
    expect(Object.keys(engines).sort()).toEqual([...SCAN_TYPES].sort());
    for (const scanType of SCAN_TYPES) {
      expect(engines[scanType].scanType).toBe(scanType);
      const findings = await engines[scanType].scan(target(scanType));
      expect(findings.length).toBeGreaterThan(0);
    }
  });

  it("uses an injected engine instead of the simulator for its scan type", async () => {
    const failing: ScannerEngine = {
      scanType: "container",
      scan: () => Promise.reject(new Error("registry unreachable")),
    };
    const engines = createEngines({ durationMs: 0, overrides: { container: failing } });
    expect(engines.container).toBe(failing);
    await expect(engines.container.scan(target("container"))).rejects.toThrow("registry unreachable");
    await expect(engines.sast.scan(target("sast"))).resolves.not.toHaveLength(0);
  });
});

describe("finding catalogue", () => {
  it.each(SCAN_TYPES)("has at least 15 distinct %s entries", (scanType) => {
    const keys = catalogue[scanType].map((entry) => entry.key);
    expect(keys.length).toBeGreaterThanOrEqual(15);
    expect(new Set(keys).size).toBe(keys.length);
  });

  type MutableCatalogue = Record<ScanType, Record<string, unknown>[]>;
  const edited = (edit: (copy: MutableCatalogue) => void): MutableCatalogue => {
    const copy = structuredClone(catalogue) as unknown as MutableCatalogue;
    edit(copy);
    return copy;
  };

  it("accepts itself unchanged", () => {
    expect(parseCatalogue(edited(() => {}))).toEqual(catalogue);
  });

  it.each<[string, (c: MutableCatalogue) => void, RegExp]>([
    [
      "a score outside the severity's band",
      (c) => Object.assign(c.sca[0]!, { severity: "low", cvssScore: 9.8 }),
      /sca\[0\]\.cvssScore/,
    ],
    [
      "a score with two decimals",
      (c) => Object.assign(c.container[0]!, { severity: "high", cvssScore: 7.25 }),
      /container\[0\]\.cvssScore/,
    ],
    ["a missing CVE", (c) => delete c.container[1]!.cve, /container\[1\]\.cve/],
    ["a malformed CWE", (c) => (c.sast[2]!.cwe = "79"), /sast\[2\]\.cwe/],
    [
      "a language without paths",
      (c) => delete (c.sast[0]!.paths as Record<string, unknown>).go,
      /sast\[0\]\.paths\.go/,
    ],
    ["a duplicate key", (c) => (c.dast[1]!.key = c.dast[0]!.key), /Keys must be unique/],
    ["an unknown field", (c) => (c.dast[0]!.cve = "CVE-2021-44228"), /Unrecognized key/],
  ])("rejects %s", (_, edit, message) => {
    expect(() => parseCatalogue(edited(edit))).toThrow(message);
  });
});
