// Domain enums in GraphQL: values are UPPER_CASE here and lower_case in the domain (and REST).
import { REPORT_FORMATS } from "../../domain/scans/scans.schemas.ts";
import { builder } from "../builder.ts";

export function upperCaseEnum<const V extends string>(name: string, values: readonly V[], description?: string) {
  return builder.enumType(name, {
    ...(description && { description }),
    values: Object.fromEntries(values.map((v) => [v.toUpperCase(), { value: v }])) as Record<string, { value: V }>,
  });
}

export const CriticalityEnum = upperCaseEnum("Criticality", ["low", "medium", "high", "critical"]);
export const SeverityEnum = upperCaseEnum("Severity", ["low", "medium", "high", "critical"]);
export const ScanTypeEnum = upperCaseEnum("ScanType", ["sast", "dast", "sca", "container"]);
export const ScanStatusEnum = upperCaseEnum("ScanStatus", ["queued", "running", "completed", "failed"]);
export const ScanSourceKindEnum = upperCaseEnum("ScanSourceKind", ["engine", "report"]);
export const ReportFormatEnum = upperCaseEnum("ReportFormat", REPORT_FORMATS);
export const VulnerabilityStatusEnum = upperCaseEnum("VulnerabilityStatus", [
  "open",
  "in_progress",
  "resolved",
  "accepted",
]);
export const PolicyActionEnum = upperCaseEnum("PolicyAction", ["allow", "block", "monitor"]);
export const WebhookStatusEnum = upperCaseEnum("WebhookStatus", ["active", "disabled", "error"]);
export const DeliveryStatusEnum = upperCaseEnum("DeliveryStatus", [
  "pending",
  "delivered",
  "dropped",
  "failed",
  "cancelled",
]);
export const EventTypeEnum = builder.enumType("EventType", {
  values: {
    SCAN_STARTED: { value: "scan.started" },
    SCAN_COMPLETED: { value: "scan.completed" },
    SCAN_FAILED: { value: "scan.failed" },
    VULNERABILITY_CREATED: { value: "vulnerability.created" },
    VULNERABILITY_RESOLVED: { value: "vulnerability.resolved" },
    POLICY_VIOLATED: { value: "policy.violated" },
    VULNERABILITY_UPDATED: { value: "vulnerability.updated" },
    VULNERABILITY_SLA_BREACHED: { value: "vulnerability.sla_breached" },
    APPLICATION_CREATED: { value: "application.created" },
    APPLICATION_UPDATED: { value: "application.updated" },
    APPLICATION_DELETED: { value: "application.deleted" },
    POLICY_CREATED: { value: "policy.created" },
    POLICY_UPDATED: { value: "policy.updated" },
    POLICY_DELETED: { value: "policy.deleted" },
    WEBHOOK_CREATED: { value: "webhook.created" },
    WEBHOOK_UPDATED: { value: "webhook.updated" },
    WEBHOOK_DELETED: { value: "webhook.deleted" },
  } as const,
});
