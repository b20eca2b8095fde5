// The event bench/events.ts and its writers commit: a scan.completed of an application of its own.
import type { NewEvent } from "../src/events/outbox.ts";
import { newId } from "../src/ids.ts";

export const scanEvent = (triggeredBy: string): NewEvent => {
  const applicationId = newId();
  const at = new Date().toISOString();
  return {
    type: "scan.completed",
    applicationId,
    data: {
      id: newId(),
      applicationId,
      scanType: "sast",
      status: "completed",
      triggeredBy,
      startedAt: at,
      completedAt: at,
      summary: null,
    },
  };
};
