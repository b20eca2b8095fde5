// The API document's groups of operations, in the order it lists them, each with what it holds.
export const API_TAGS = {
  Applications: "The inventory: applications with their owner (a team), criticality and tags.",
  Scans: "Security scans (sast, dast, sca, container) queued or reported, and their results.",
  "Scan jobs": "External scans as agents run them: claim, heartbeat, report or fail (CONTRACT §12).",
  Vulnerabilities: "What scans found, deduplicated, with triage decisions as VEX documents and their history.",
  Remediation: "Remediation deadlines per severity, and how fast vulnerabilities are fixed (CONTRACT §19).",
  Policies: "Release gates: conditions on applications and severities, and their evaluation.",
  Webhooks: "Signed event notifications: subscriptions, their deliveries and redelivery.",
  Events: "The event log that webhooks and subscriptions read, for replay with a cursor.",
  Access: "Who the token is: subject, scopes and teams.",
  Operations: "Health, readiness, metrics and this document.",
} as const;

export type ApiTag = keyof typeof API_TAGS;
