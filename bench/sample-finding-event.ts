// The event the webhook suites commit: a vulnerability.created of an application of its own. No
// occurredAt: the outbox stamps each event inside its transaction, the best stand-in for when it happened.
import type { NewEvent } from "../src/events/outbox.ts";
import { newId } from "../src/ids.ts";

export const findingEvent = (n: number): NewEvent => ({
  type: "vulnerability.created",
  data: {
    id: newId(),
    severity: "high",
    applicationId: newId(),
    title: `Benchmark finding ${n}`,
    createdAt: new Date().toISOString(),
  },
});
