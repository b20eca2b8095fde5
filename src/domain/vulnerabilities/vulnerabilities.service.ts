import { requireScope } from "../../auth/scopes.ts";
import type { Vulnerability } from "../../generated/prisma/client.ts";
import { requireApplication } from "../applications/require-application.ts";
import type { ServiceContext } from "../context.ts";
import { findPage, type Page, type PageRequest } from "../pagination.ts";
import { parseInput } from "../validation.ts";
import { vulnerabilityFilterSchema } from "./vulnerabilities.schemas.ts";

/** Filters arrive as raw strings (query parameters, GraphQL arguments) and are validated here. */
export async function listApplicationVulnerabilities(
  ctx: ServiceContext,
  applicationId: string,
  rawFilter: { severity?: unknown; status?: unknown },
  page: PageRequest,
): Promise<Page<Vulnerability>> {
  requireScope(ctx.actor, "vulnerabilities:read");
  const filter = parseInput(vulnerabilityFilterSchema, rawFilter, "Filter");
  await requireApplication(ctx.db, applicationId);
  return findPage(page, (args) =>
    ctx.db.vulnerability.findMany({ ...args, where: { AND: [{ applicationId, ...filter }, args.where] } }),
  );
}
