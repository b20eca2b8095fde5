// Every event the service emits. The same name is the webhook eventType, the outbox row's type
// and the GraphQL subscription topic.

/**
 * The audit trail (docs/spec/CONTRACT.md §17): changes of configuration, with who made them; kept
 * AUDIT_RETENTION_DAYS rather than EVENT_RETENTION_DAYS.
 */
export const AUDIT_EVENT_TYPES = [
  "application.created",
  "application.updated",
  "application.deleted",
  "policy.created",
  "policy.updated",
  "policy.deleted",
  "webhook.created",
  "webhook.updated",
  "webhook.deleted",
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export const EVENT_TYPES = [
  "scan.started",
  "scan.completed",
  "scan.failed",
  "vulnerability.created",
  "vulnerability.resolved",
  "policy.violated",
  "vulnerability.updated",
  "vulnerability.sla_breached",
  ...AUDIT_EVENT_TYPES,
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (v: string): v is EventType => (EVENT_TYPES as readonly string[]).includes(v);

/** Read scope a consumer needs to receive an event type (GraphQL subscriptions check it). */
export const EVENT_READ_SCOPE = {
  "scan.started": "scans:read",
  "scan.completed": "scans:read",
  "scan.failed": "scans:read",
  "vulnerability.created": "vulnerabilities:read",
  "vulnerability.resolved": "vulnerabilities:read",
  "policy.violated": "policies:read",
  "vulnerability.updated": "vulnerabilities:read",
  "vulnerability.sla_breached": "vulnerabilities:read",
  "application.created": "applications:read",
  "application.updated": "applications:read",
  "application.deleted": "applications:read",
  "policy.created": "policies:read",
  "policy.updated": "policies:read",
  "policy.deleted": "policies:read",
  "webhook.created": "webhooks:read",
  "webhook.updated": "webhooks:read",
  "webhook.deleted": "webhooks:read",
} as const satisfies Record<EventType, string>;

export interface ScanEventData {
  id: string;
  applicationId: string;
  scanType: string;
  status: string;
  triggeredBy: string | null;
  startedAt: string | null;
  completedAt: string | null;
  summary: { totalFindings: number; critical: number; high: number; medium: number; low: number } | null;
}

export interface VulnerabilityCreatedData {
  id: string;
  severity: string;
  applicationId: string;
  title: string;
  createdAt: string;
}

export interface VulnerabilityResolvedData extends VulnerabilityCreatedData {
  status: string;
}

/**
 * A vulnerability's status or triage decision changed (docs/spec/CONTRACT.md §13): by a VEX, or by the report that
 * found it.
 */
export interface VulnerabilityUpdatedData extends VulnerabilityResolvedData {
  analysis: {
    state: string;
    justification: string | null;
    detail: string | null;
    response: string[];
    source: string;
    by: string | null;
    at: string;
  } | null;
}

/** A vulnerability's remediation deadline passed while it was open or in progress (docs/spec/CONTRACT.md §19). */
export interface VulnerabilitySlaBreachedData extends VulnerabilityCreatedData {
  dueAt: string;
}

export interface PolicyViolatedData {
  policyId: string;
  policyName: string;
  action: string;
  applicationId: string;
  scanId: string;
  vulnerabilityIds: string[];
}

/** Who made a change of configuration: the token's subject. */
export interface AuditActor {
  sub: string;
}

/** The resource as REST returns it after the change (its secret masked), and who made it. */
export type ConfigurationData = { id: string; name: string; actor: AuditActor } & Record<string, unknown>;

/** An update's: also the names of the fields whose value changed (never updatedAt). */
export type ConfigurationUpdateData = ConfigurationData & { changed: string[] };

/** A delete's: what named the resource, and who deleted it. */
export interface ConfigurationDeleteData {
  id: string;
  name: string;
  actor: AuditActor;
}

export interface EventData {
  "scan.started": ScanEventData;
  "scan.completed": ScanEventData;
  "scan.failed": ScanEventData;
  "vulnerability.created": VulnerabilityCreatedData;
  "vulnerability.resolved": VulnerabilityResolvedData;
  "policy.violated": PolicyViolatedData;
  "vulnerability.updated": VulnerabilityUpdatedData;
  "vulnerability.sla_breached": VulnerabilitySlaBreachedData;
  "application.created": ConfigurationData;
  "application.updated": ConfigurationUpdateData;
  "application.deleted": ConfigurationDeleteData;
  "policy.created": ConfigurationData;
  "policy.updated": ConfigurationUpdateData;
  "policy.deleted": ConfigurationDeleteData;
  "webhook.created": ConfigurationData;
  "webhook.updated": ConfigurationUpdateData;
  "webhook.deleted": ConfigurationDeleteData;
}

/** The envelope consumers see (webhook body minus signature; GraphQL `events` items). */
export interface EventEnvelope<T extends EventType = EventType> {
  eventId: string;
  eventType: T;
  timestamp: string;
  data: EventData[T];
}
