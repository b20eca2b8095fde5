// The built-in engine: no real scanning, but per application and scan type a stable population of
// realistic findings, of which each scan reports most. Rescans therefore show dedup (same
// fingerprints), auto-resolve (a finding a scan missed) and reopen (it comes back later).
import { createHash } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import {
  catalogue,
  ECOSYSTEM_OF,
  languageFamily,
  type ContainerEntry,
  type DastEntry,
  type LanguageFamily,
  type SastEntry,
  type ScaEntry,
} from "./catalogue.ts";
import { CVSS_BANDS } from "./cvss.ts";
import type { Finding, ScannerEngine, ScanTarget, ScanType } from "./engine.ts";
import { seededRandom, type Random } from "./seeded-random.ts";

const POPULATION_SIZE = { min: 6, max: 14 };
const MAX_MISSED_SHARE = 0.3;

export interface SimulatorOptions {
  durationMs: number;
}

export function createSimulatorEngine(scanType: ScanType, { durationMs }: SimulatorOptions): ScannerEngine {
  return {
    scanType,
    source: { kind: "engine", format: null, tool: "simulator", toolVersion: null },
    async scan(target, signal) {
      if (target.scanType !== scanType) {
        throw new Error(`The ${scanType} engine cannot run a ${target.scanType} scan`);
      }
      await delay(durationMs, undefined, { signal });
      return reportedFindings(simulatedPopulation(target), target.scanId);
    },
  };
}

export type PopulationKey = Pick<ScanTarget, "applicationId" | "scanType" | "language">;

/**
 * Every finding the application "has" for the scan type. It depends only on the key, so it is the
 * same on every scan; changing the application's language moves the findings to other files.
 */
export function simulatedPopulation(key: PopulationKey): Finding[] {
  const family = languageFamily(key.language);
  switch (key.scanType) {
    case "sast":
      return draw(key, catalogue.sast, (entry, random) => sastFinding(entry, random, family));
    case "dast":
      return draw(key, catalogue.dast, dastFinding);
    case "sca":
      return draw(key, catalogue.sca, scaFinding, (entry) => entry.ecosystem === ECOSYSTEM_OF[family]);
    case "container":
      return draw(key, catalogue.container, (entry, random) => containerFinding(entry, random, key.applicationId));
  }
}

/** Most of the population, never none: a random share up to MAX_MISSED_SHARE is missed, seeded by the scan. */
function reportedFindings(population: readonly Finding[], scanId: string): Finding[] {
  const random = seededRandom(scanId);
  const missedCount = random.int(0, Math.floor(population.length * MAX_MISSED_SHARE));
  const missed = new Set(random.shuffle(population).slice(0, missedCount));
  return population.filter((finding) => !missed.has(finding));
}

function draw<E extends { key: string }>(
  key: PopulationKey,
  entries: readonly E[],
  toFinding: (entry: E, random: Random) => Finding,
  isPreferred: (entry: E) => boolean = () => true,
): Finding[] {
  const random = seededRandom(key.applicationId, key.scanType);
  const size = random.int(POPULATION_SIZE.min, POPULATION_SIZE.max);
  const candidates = [
    ...random.shuffle(entries.filter(isPreferred)),
    ...random.shuffle(entries.filter((entry) => !isPreferred(entry))),
  ];
  // Each finding's details get their own seed, so editing the catalogue does not move the
  // locations (and so the fingerprints) of findings that stay in the population.
  return candidates
    .slice(0, size)
    .map((entry) => toFinding(entry, seededRandom(key.applicationId, key.scanType, entry.key)));
}

type CatalogueText = Pick<Finding, "title" | "description" | "severity" | "cwe" | "remediation">;
type Details = Pick<Finding, "cve" | "cvssScore" | "introducedIn" | "packageName" | "packageVersion"> & {
  location: string;
};

function finding(scanType: ScanType, entry: CatalogueText & { key: string }, details: Details): Finding {
  const { title, description, severity, cwe, remediation } = entry;
  return {
    fingerprint: createHash("sha256").update([scanType, entry.key, details.location].join("\0")).digest("hex"),
    title,
    description,
    severity,
    cwe,
    remediation,
    ...details,
  };
}

function scoreWithinBand(severity: Finding["severity"], random: Random): number {
  const band = CVSS_BANDS[severity];
  return random.int(Math.round(band.min * 10), Math.round(band.max * 10)) / 10;
}

const commit = (random: Random): string => `commit ${random.hex(7)}`;

function sastFinding(entry: SastEntry, random: Random, family: LanguageFamily): Finding {
  return finding("sast", entry, {
    location: `${random.pick(entry.paths[family])}:${random.int(8, 420)}`,
    cve: null,
    cvssScore: scoreWithinBand(entry.severity, random),
    introducedIn: commit(random),
    packageName: null,
    packageVersion: null,
  });
}

function dastFinding(entry: DastEntry, random: Random): Finding {
  return finding("dast", entry, {
    location: random.pick(entry.paths),
    cve: null,
    cvssScore: scoreWithinBand(entry.severity, random),
    introducedIn: commit(random),
    packageName: null,
    packageVersion: null,
  });
}

function scaFinding(entry: ScaEntry, random: Random): Finding {
  const version = random.pick(entry.versions);
  // A package URL; Maven's group:artifact becomes group/artifact.
  const purl = `pkg:${entry.ecosystem}/${entry.package.replace(":", "/")}@${version}`;
  return finding("sca", entry, {
    location: purl,
    cve: entry.cve,
    cvssScore: entry.cvssScore,
    introducedIn: `${entry.package}@${version}`,
    packageName: entry.package,
    packageVersion: version,
  });
}

function containerFinding(entry: ContainerEntry, random: Random, applicationId: string): Finding {
  const version = random.pick(entry.versions);
  // Packages from the same base image share its layer.
  const layer = `sha256:${seededRandom(applicationId, "container", entry.baseImage).hex(12)}`;
  return finding("container", entry, {
    location: `${entry.baseImage} layer ${layer} ${entry.package}@${version}`,
    cve: entry.cve,
    cvssScore: entry.cvssScore,
    introducedIn: `FROM ${entry.baseImage}`,
    packageName: entry.package,
    packageVersion: version,
  });
}
