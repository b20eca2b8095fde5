// Triage as documents (docs/spec/CONTRACT.md §13): a VEX document's statements applied to an application's
// vulnerabilities, and the decisions in force read back for an export. The document is read by
// src/vex/ (OpenVEX, CycloneDX) and applied (vex-transaction.ts) in a worker thread; here is what
// comes before, whichever door the document came through.
import { requireScope } from "../../auth/scopes.ts";
import { isForeignKeyViolation } from "../../db/client.ts";
import { z } from "zod";
import { invalid, notFound, type FieldError } from "../../errors.ts";
import { Prisma, type Vulnerability } from "../../generated/prisma/client.ts";
import { requireApplication } from "../applications/require-application.ts";
import type { ServiceContext } from "../context.ts";
import type { vexOutcomeSchema } from "./vex-outcome.view.ts";
import type { VexCounts } from "./vex-plan.ts";
import type { VexTarget } from "./vex-transaction.ts";

/**
 * docs/spec/CONTRACT.md §13's answer: how many statements did what, and those that could not apply (vex-
 * outcome.view.ts).
 */
export type VexOutcome = z.infer<typeof vexOutcomeSchema>;

/** A VEX document read in a worker thread (read-report-off-thread.ts), which applies it there when asked (vex-transaction.ts). */
export interface VexDocument {
  /** The statements that are well-formed but cannot be applied. */
  errors: FieldError[];
  apply(target: VexTarget): Promise<VexCounts>;
  /** Ends the reading: call it when done, applied or not. */
  close(): void;
}

/**
 * Applies a VEX document to the application's vulnerabilities. `open` reads the document once the
 * caller is known to be allowed to (the scope is checked before anything about the input).
 */
export async function applyVex(
  ctx: ServiceContext,
  applicationId: string,
  open: () => Promise<VexDocument>,
  options: { expiresAt?: unknown } = {},
): Promise<VexOutcome> {
  const actor = requireScope(ctx.actor, "vulnerabilities:triage");
  const at = new Date();
  const expiresAt = options.expiresAt === undefined ? undefined : expiryOf(options.expiresAt, at);
  await requireApplication(ctx.db, actor, applicationId);
  const document = await open();
  try {
    const counts = await document.apply({ applicationId, by: actor.sub, at, ...(expiresAt && { expiresAt }) });
    return { ...counts, errors: document.errors };
  } catch (err) {
    // Deleted while the document was read.
    if (isForeignKeyViolation(err)) throw notFound("Application");
    throw err;
  } finally {
    document.close();
  }
}

/** When the document's accepting decisions end (docs/spec/CONTRACT.md §19): a timestamp after `now`. */
function expiryOf(value: unknown, now: Date): Date {
  const parsed = z.iso.datetime({ offset: true }).safeParse(value);
  if (!parsed.success)
    throw invalid("expiresAt must be a timestamp", [
      { path: "expiresAt", message: "Must be an ISO 8601 timestamp with a time zone, e.g. 2027-03-01T00:00:00Z" },
    ]);
  const expiresAt = new Date(parsed.data);
  if (expiresAt <= now)
    throw invalid("expiresAt must be in the future", [{ path: "expiresAt", message: "Must be after now" }]);
  return expiresAt;
}

/** A vulnerability with a decision in force, as an export needs it. */
export type DecidedVulnerability = Pick<
  Vulnerability,
  "id" | "aliases" | "location" | "packageName" | "packageVersion" | "status" | "analysis" | "title"
>;

/** The application and every one of its vulnerabilities with an analysis, oldest first. */
export async function decisionsInForce(ctx: ServiceContext, applicationId: string) {
  const actor = requireScope(ctx.actor, "vulnerabilities:read");
  await requireApplication(ctx.db, actor, applicationId);
  const application = await ctx.db.application.findUniqueOrThrow({
    where: { id: applicationId },
    select: { id: true, name: true },
  });
  const vulnerabilities: DecidedVulnerability[] = await ctx.db.vulnerability.findMany({
    where: { applicationId, analysis: { not: Prisma.AnyNull } },
    select: {
      id: true,
      aliases: true,
      location: true,
      packageName: true,
      packageVersion: true,
      status: true,
      analysis: true,
      title: true,
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return { application, vulnerabilities };
}
