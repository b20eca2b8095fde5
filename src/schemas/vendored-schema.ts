// JSON Schemas of the formats the service reads, kept in this folder as their publishers
// publish them (see README.md here), so checking a document needs no package and no network.
import { readFileSync } from "node:fs";

export function vendoredSchema(file: "openvex-0.2.0.json" | "sarif-2.1.0-rtm.5.json"): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`./${file}`, import.meta.url), "utf8")) as Record<string, unknown>;
}
