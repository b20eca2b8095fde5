// Events to commit in the event log's tests: each type with data of its own shape, numbered `n`.
import type pg from "pg";
import type { EventType } from "../../src/events/catalog.ts";
import { recordEvents, type NewEvent } from "../../src/events/outbox.ts";
import { newId } from "../../src/ids.ts";

/** An event of `type` about `applicationId`; any vulnerability type is written as vulnerability.created, any scan type with a scan's data. */
export function sampleEvent(type: EventType, applicationId: string, n: number): NewEvent {
  const at = new Date().toISOString();
  if (type === "policy.violated") {
    return {
      type,
      applicationId,
      data: {
        policyId: newId(),
        policyName: `p${n}`,
        action: "block",
        applicationId,
        scanId: newId(),
        vulnerabilityIds: [],
      },
    };
  }
  if (type.startsWith("vulnerability.")) {
    return {
      type: "vulnerability.created",
      applicationId,
      data: { id: newId(), severity: "high", applicationId, title: `v${n}`, createdAt: at },
    };
  }
  const data = {
    id: newId(),
    applicationId,
    scanType: "sast",
    status: "completed",
    triggeredBy: `n${n}`,
    startedAt: at,
    completedAt: at,
    summary: null,
  };
  return { type: type as "scan.completed", applicationId, data };
}

/** Commits `count` scan.completed events, each about an application of its own, in one transaction. */
export async function commitSampleEvents(pool: pg.Pool, count: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await recordEvents(
      client,
      Array.from({ length: count }, (_, n) => sampleEvent("scan.completed", newId(), n)),
    );
    await client.query("COMMIT");
  } finally {
    client.release();
  }
}
