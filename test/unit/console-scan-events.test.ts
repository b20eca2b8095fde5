// How the console lays live scan events over what its queries returned (console/src/scan-events.ts).
import { isAhead, latestOf, remember, type ScanEvent } from "../../console/src/scan-events.ts";

const event = (id: string, status: string, scanType = "SAST"): ScanEvent =>
  ({
    id,
    applicationId: "app",
    scanType,
    status,
    triggeredBy: null,
    startedAt: null,
    completedAt: null,
    summary: null,
  }) as ScanEvent;
// UUIDv7 ids sort by creation time; these stand in for two scans made in this order.
const [older, newer] = ["0190f3a4-0000-7000-8000-000000000001", "0190f3a4-0000-7000-8000-000000000002"];

describe("live scan events over queried scans", () => {
  it("an event is ahead of what is known only for the same scan further along", () => {
    expect(isAhead({ id: older!, status: "QUEUED" }, event(older!, "RUNNING"))).toBe(true);
    expect(isAhead({ id: older!, status: "RUNNING" }, event(older!, "COMPLETED"))).toBe(true);
    expect(isAhead({ id: older!, status: "COMPLETED" }, event(older!, "RUNNING"))).toBe(false); // a late event
    expect(isAhead({ id: older!, status: "FAILED" }, event(older!, "COMPLETED"))).toBe(false);
    expect(isAhead({ id: older!, status: "QUEUED" }, event(newer!, "RUNNING"))).toBe(false);
  });

  it("the latest scan of a type is a newer scan's event, the same scan's event when further along, else what the query said", () => {
    const queried = { id: older!, status: "COMPLETED", scanType: "SAST", summary: { totalFindings: 3 } };
    expect(latestOf(queried, undefined)).toBe(queried);
    expect(latestOf(undefined, event(newer!, "RUNNING"))).toMatchObject({ id: newer, status: "RUNNING" });
    expect(latestOf(queried, event(newer!, "RUNNING"))).toMatchObject({ id: newer, status: "RUNNING" });
    expect(latestOf(queried, event(older!, "RUNNING"))).toBe(queried); // the query (a refetch) knows more
    const running = { id: older!, status: "RUNNING", scanType: "SAST", summary: null };
    expect(latestOf(running, event(older!, "COMPLETED"))).toMatchObject({ id: older, status: "COMPLETED" });
    expect(latestOf({ ...running, id: newer! }, event(older!, "COMPLETED"))).toMatchObject({
      id: newer,
      status: "RUNNING",
    });
  });

  it("remembers the furthest state of each scan, whatever order its events arrive in", () => {
    let events: ReadonlyMap<string, ScanEvent> = new Map();
    events = remember(events, event(older!, "COMPLETED"));
    const before = events;
    events = remember(events, event(older!, "RUNNING")); // arrived late
    expect(events).toBe(before);
    events = remember(events, event(newer!, "RUNNING"));
    events = remember(events, event(newer!, "FAILED"));
    expect([...events.values()].map((e) => `${e.id.slice(-1)}:${e.status}`)).toEqual(["1:COMPLETED", "2:FAILED"]);
  });
});
