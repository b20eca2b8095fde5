// Which deliveries are pending, written so that Postgres reads them from the two partial indexes
// that hold them (fresh ones and retries: webhook_deliveries_fresh_due and _retries_due / the retry
// schedule) rather than from a subscription's, or the table's, whole delivery history. The two
// attempt_count arms cover every row; each arm is what lets one index's predicate apply.
export const PENDING_DELIVERY = "status = 'pending' AND (attempt_count = 0 OR attempt_count > 0)";
