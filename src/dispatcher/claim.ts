// Claims due deliveries in one statement: for each subscription, up to what its endpoint may still
// take (due retries first, then fresh deliveries, each in due order; no fresh one while the endpoint
// is backing off and has a retry pending), due retries first across subscriptions too (each
// endpoint's share bounds them, and a timed-out attempt is then retried on time even behind another
// subscription's backlog), then the oldest, leased to this instance and returned with the event
// and the subscription they need to be sent. SKIP LOCKED splits the work between instances;
// an expired lease (a crashed owner) is claimable again. The picked rows are locked, so the lease
// is taken by their ctids, a lookup no estimate of the table's size can turn into a scan.
import type pg from "pg";
import type { EventType } from "../events/catalog.ts";
import { occurredAtIso } from "../events/event-log.ts";

export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  attemptCount: number;
  firstAttemptAt: Date | null;
  url: string;
  /** Opened only to sign (secret-box.ts). */
  sealedSecret: string;
  webhookStatus: "active" | "error" | "disabled";
  eventId: string;
  eventType: EventType;
  eventData: object;
  /** As `toISOString` writes it (occurredAtIso). */
  occurredAt: string;
}

export interface ClaimRequest {
  owner: string;
  leaseMs: number;
  /** Deliveries to claim at most. */
  limit: number;
  /** Per subscription: how many more attempts its endpoint may take now, and whether it is backing off. */
  allowance: { webhookIds: string[]; available: number[]; backingOff: boolean[] };
  /** The allowance of a subscription not listed. */
  defaultAllowance: number;
}

const DUE_RETRIES = "d.attempt_count > 0";
const DUE_FRESH = `d.attempt_count = 0 AND NOT (a.backing_off AND EXISTS (
  SELECT 1 FROM webhook_deliveries r WHERE r.webhook_id = a.webhook_id AND r.status = 'pending' AND r.attempt_count > 0))`;

// Each branch is its own sub-select so that it may lock (FOR UPDATE is refused on a UNION itself);
// its attempt_count condition matches one of the two partial indexes.
const dueBranch = (name: string, condition: string) => `
  SELECT * FROM (
    SELECT d.ctid, d.next_attempt_at, d.id, ${name === "retries"} AS retry FROM webhook_deliveries d
     WHERE d.webhook_id = a.webhook_id AND d.status = 'pending' AND ${condition}
       AND d.next_attempt_at <= now() AND (d.lease_expires_at IS NULL OR d.lease_expires_at < now())
     ORDER BY d.next_attempt_at, d.id
     LIMIT a.n
       FOR UPDATE OF d SKIP LOCKED
  ) ${name}`;

const CLAIM = `
  WITH allowance AS (
    SELECT w.id AS webhook_id, coalesce(given.n, $5::int) AS n, coalesce(given.backing_off, false) AS backing_off
      FROM webhooks w LEFT JOIN unnest($3::uuid[], $4::int[], $7::boolean[]) AS given(webhook_id, n, backing_off) ON given.webhook_id = w.id
     WHERE coalesce(given.n, $5::int) > 0
  ),
  picked AS (
    SELECT due.ctid FROM allowance a CROSS JOIN LATERAL (
      ${dueBranch("retries", DUE_RETRIES)}
      UNION ALL
      ${dueBranch("fresh", DUE_FRESH)}
      LIMIT a.n
    ) due
    ORDER BY due.retry DESC, due.next_attempt_at, due.id
    LIMIT $6
  )
  UPDATE webhook_deliveries d
     SET lease_owner = $1, lease_expires_at = now() + $2::int * interval '1 millisecond'
    FROM webhooks w, events e
   WHERE d.ctid = ANY (ARRAY(SELECT ctid FROM picked)) AND w.id = d.webhook_id AND e.id = d.event_id
  RETURNING d.id, d.webhook_id, d.attempt_count, d.first_attempt_at, w.url, w.sealed_secret, w.status::text AS webhook_status,
            e.id AS event_id, e.type AS event_type, e.data AS event_data, ${occurredAtIso("e.occurred_at")}`;

type ClaimRow = {
  id: string;
  webhook_id: string;
  attempt_count: number;
  first_attempt_at: Date | null;
  url: string;
  sealed_secret: string;
  webhook_status: ClaimedDelivery["webhookStatus"];
  event_id: string;
  event_type: EventType;
  event_data: object;
  occurred_at: string;
};

export async function claimDeliveries(pool: pg.Pool, request: ClaimRequest): Promise<ClaimedDelivery[]> {
  if (request.limit <= 0) return [];
  const { allowance } = request;
  const { rows } = await pool.query<ClaimRow>({
    name: "claim-deliveries", // prepared once per connection: it is planned once, not on every claim
    text: CLAIM,
    values: [
      request.owner,
      request.leaseMs,
      allowance.webhookIds,
      allowance.available,
      request.defaultAllowance,
      request.limit,
      allowance.backingOff,
    ],
  });
  return rows.map((r) => ({
    id: r.id,
    webhookId: r.webhook_id,
    attemptCount: r.attempt_count,
    firstAttemptAt: r.first_attempt_at,
    url: r.url,
    sealedSecret: r.sealed_secret,
    webhookStatus: r.webhook_status,
    eventId: r.event_id,
    eventType: r.event_type,
    eventData: r.event_data,
    occurredAt: r.occurred_at,
  }));
}
