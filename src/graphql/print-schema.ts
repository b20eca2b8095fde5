// `npm run schema:print`: writes schema.graphql at the repository root from the Pothos schema.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { printSchema } from "graphql";
import { schema } from "./schema.ts";

export const SCHEMA_FILE = fileURLToPath(new URL("../../schema.graphql", import.meta.url));

export const printedSchema = () => `${printSchema(schema)}\n`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(SCHEMA_FILE, printedSchema());
  console.log(`wrote ${SCHEMA_FILE}`);
}
