// The simulator's findings are data (catalogue/*.json). They are validated once, when this module
// is imported, so a bad edit stops the service at start-up instead of producing odd findings.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { severityField } from "../../domain/validation.ts";
import { hasOneDecimal, isWithinBand } from "./cvss.ts";

export const LANGUAGE_FAMILIES = ["javascript", "python", "java", "go"] as const;
export type LanguageFamily = (typeof LANGUAGE_FAMILIES)[number];

/** Package ecosystems, named as in package URLs (purl types). */
export const ECOSYSTEMS = ["npm", "pypi", "maven", "golang"] as const;
export type Ecosystem = (typeof ECOSYSTEMS)[number];

export const ECOSYSTEM_OF: Readonly<Record<LanguageFamily, Ecosystem>> = {
  javascript: "npm",
  python: "pypi",
  java: "maven",
  go: "golang",
};

/** Maps an application's free-text language onto the families the catalogue has paths for. */
export function languageFamily(language: string | null): LanguageFamily {
  const name = (language ?? "").toLowerCase();
  if (/python|django|flask/.test(name)) return "python";
  // Before the Java test: "javascript" contains "java".
  if (/javascript|typescript|node|deno|\b[jt]s\b/.test(name)) return "javascript";
  if (/java|kotlin|scala|spring/.test(name)) return "java";
  if (/\bgo\b|golang/.test(name)) return "go";
  // The simulator has to pretend something; JavaScript is the most common.
  return "javascript";
}

const text = z.string().trim().min(1);

const entryFields = {
  key: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "Must be kebab-case"),
  title: text,
  description: text,
  severity: severityField,
  cwe: z.string().regex(/^CWE-\d+$/, "Must look like CWE-79"),
  remediation: text,
};

const knownVulnerabilityFields = {
  ...entryFields,
  cve: z.string().regex(/^CVE-\d{4}-\d{4,}$/, "Must look like CVE-2021-44228"),
  cvssScore: z.number().refine(hasOneDecimal, "Must have one decimal"),
  package: text,
  /** Vulnerable versions an application may be pinned to. */
  versions: z.array(text).min(1),
};

const scoreWithinBand = (entry: { severity: z.infer<typeof severityField>; cvssScore: number }) =>
  isWithinBand(entry.severity, entry.cvssScore);
const bandMessage = { message: "CVSS score is outside the severity's band", path: ["cvssScore"] };

export const sastEntrySchema = z.strictObject({
  ...entryFields,
  /** Source files where the weakness may sit, for every language family. */
  paths: z.record(
    z.enum(LANGUAGE_FAMILIES),
    z.array(z.string().regex(/^[\w./-]+$/, "Must be a relative file path")).min(1),
  ),
});

export const dastEntrySchema = z.strictObject({
  ...entryFields,
  paths: z.array(z.string().startsWith("/", "Must be a URL path")).min(1),
});

export const scaEntrySchema = z
  .strictObject({ ...knownVulnerabilityFields, ecosystem: z.enum(ECOSYSTEMS) })
  .refine(scoreWithinBand, bandMessage);

export const containerEntrySchema = z
  .strictObject({
    ...knownVulnerabilityFields,
    baseImage: z.string().regex(/^[a-z0-9./-]+:[\w.-]+$/, "Must look like debian:12"),
  })
  .refine(scoreWithinBand, bandMessage);

export type SastEntry = z.infer<typeof sastEntrySchema>;
export type DastEntry = z.infer<typeof dastEntrySchema>;
export type ScaEntry = z.infer<typeof scaEntrySchema>;
export type ContainerEntry = z.infer<typeof containerEntrySchema>;

const entriesOf = <S extends z.ZodType<{ key: string }>>(entry: S) =>
  z
    .array(entry)
    .min(1)
    .refine((entries) => new Set(entries.map((e) => e.key)).size === entries.length, "Keys must be unique");

const catalogueSchema = z.strictObject({
  sast: entriesOf(sastEntrySchema),
  dast: entriesOf(dastEntrySchema),
  sca: entriesOf(scaEntrySchema),
  container: entriesOf(containerEntrySchema),
});

export type Catalogue = z.infer<typeof catalogueSchema>;

/** Validates a whole catalogue, throwing an error that names every bad field. */
export function parseCatalogue(data: unknown): Catalogue {
  const result = catalogueSchema.safeParse(data);
  if (!result.success) throw new Error(`Invalid scanner catalogue:\n${z.prettifyError(result.error)}`);
  return result.data;
}

const readJson = (file: string): unknown =>
  JSON.parse(readFileSync(new URL(`./catalogue/${file}`, import.meta.url), "utf8"));

export function loadCatalogue(): Catalogue {
  return parseCatalogue({
    sast: readJson("sast.json"),
    dast: readJson("dast.json"),
    sca: readJson("sca.json"),
    container: readJson("container.json"),
  });
}

export const catalogue: Catalogue = loadCatalogue();
