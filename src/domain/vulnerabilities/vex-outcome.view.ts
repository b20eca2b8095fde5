// The answer to a VEX document (docs/spec/CONTRACT.md §13), REST's body and GraphQL's VexResult alike.
import { z } from "zod";

export const vexOutcomeSchema = z
  .object({
    applied: z.int().describe("Statements that changed at least one vulnerability's status or analysis"),
    unchanged: z
      .int()
      .describe(
        "Statements whose vulnerabilities were already so decided, or decided by a later statement of the document",
      ),
    pending: z
      .int()
      .describe("Statements that match no vulnerability yet: kept, and applied when a finding with their ids appears"),
    errors: z
      .array(z.object({ path: z.string().describe("JSON Pointer of the statement"), message: z.string() }))
      .describe("Statements that are well-formed but cannot apply (e.g. products named by no package URL)"),
  })
  .meta({ id: "VexOutcome" });
