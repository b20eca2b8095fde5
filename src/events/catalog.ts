// Every event the service emits. The same name is the webhook eventType, the outbox row's type
// and the GraphQL subscription topic.

export const EVENT_TYPES = [
  "scan.started",
  "scan.completed",
  "scan.failed",
  "vulnerability.created",
  "vulnerability.resolved",
  "policy.violated",
  "vulnerability.updated",
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

export interface PolicyViolatedData {
  policyId: string;
  policyName: string;
  action: string;
  applicationId: string;
  scanId: string;
  vulnerabilityIds: string[];
}

export interface EventData {
  "scan.started": ScanEventData;
  "scan.completed": ScanEventData;
  "scan.failed": ScanEventData;
  "vulnerability.created": VulnerabilityCreatedData;
  "vulnerability.resolved": VulnerabilityResolvedData;
  "policy.violated": PolicyViolatedData;
  "vulnerability.updated": VulnerabilityUpdatedData;
}

/** The envelope consumers see (webhook body minus signature; GraphQL `events` items). */
export interface EventEnvelope<T extends EventType = EventType> {
  eventId: string;
  eventType: T;
  timestamp: string;
  data: EventData[T];
}
