// The whole GraphQL schema: importing a type file registers its type, queries and mutations.
import { builder } from "./builder.ts";
import "./types/scalars.ts";
import "./types/enums.ts";
import "./types/application.ts";
import "./types/scan.ts";
import "./types/vulnerability.ts";
import "./types/vulnerability-triage.ts";
import "./types/vulnerability-trend.ts";
import "./types/sla.ts";
import "./types/remediation-metrics.ts";
import "./types/policy.ts";
import "./types/policy-evaluation.ts";
import "./types/webhook.ts";
import "./types/webhook-delivery.ts";
import "./types/event.ts";
import "./types/me.ts";

export const schema = builder.toSchema({ sortSchema: true });
