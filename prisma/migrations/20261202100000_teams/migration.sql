-- Teams (CONTRACT §17). An event carries the teams that may see it, decided when it is written
-- (src/events/outbox.ts), so that a replay decides the same way however the application moved since:
--   teams NULL: org-wide tokens only (an application without owner, a subscription for every team);
--   teams_all false: a token with ANY of the teams (an application's owner; an owner change: both);
--   teams_all true: a token with ALL of them (a policy naming applications of several teams, a
--   subscription's teams); an empty array with teams_all is everyone's (a policy of the organisation).
-- A viewer is its teams, or NULL when org-wide. visible_to is the one test, inlined by the planner.
CREATE FUNCTION visible_to(teams text[], teams_all boolean, viewer text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN viewer IS NULL OR (teams IS NOT NULL AND CASE WHEN teams_all THEN teams <@ viewer ELSE teams && viewer END);

ALTER TABLE "events" ADD COLUMN "teams" TEXT[], ADD COLUMN "teams_all" BOOLEAN NOT NULL DEFAULT false;
UPDATE "events" e SET "teams" = ARRAY[a."owner"]
  FROM "applications" a WHERE a."id" = e."application_id" AND a."owner" IS NOT NULL;

-- The teams whose events a subscription receives; empty: every application's (a confined caller's
-- subscription always names at least one).
ALTER TABLE "webhooks" ADD COLUMN "teams" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

-- A team's page of applications, newest first.
DROP INDEX "applications_owner_idx";
CREATE INDEX "applications_owner_created_at_id_idx" ON "applications"("owner", "created_at" DESC, "id" DESC);

-- The fan-out of 20261127120000_fan_out_function, now queueing a delivery only for the subscriptions
-- that may see the event, and returning each event's teams for this instance's subscribers.
DROP FUNCTION fan_out_events(integer, boolean);
CREATE FUNCTION fan_out_events(batch_size integer, return_events boolean)
RETURNS TABLE (fanned_out integer, id uuid, type text, application_id uuid, data json, occurred_at timestamptz, "position" bigint, teams text[], teams_all boolean)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_indexscan = on
SET jit = off
AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM event_log_head FOR UPDATE;
  RETURN QUERY
  WITH batch AS (
    SELECT ctid, occurred_at, id FROM events
     WHERE fanned_out_at IS NULL
     ORDER BY occurred_at, id
     LIMIT batch_size
       FOR UPDATE
  ),
  numbered AS (
    SELECT ctid, (SELECT position FROM event_log_head) + row_number() OVER (ORDER BY occurred_at, id) AS position FROM batch
  ),
  -- The batch's rows are locked, so their ctids hold until the statement ends: the update finds them
  -- by ctid whatever the planner thinks of the table's size.
  marked AS (
    UPDATE events e SET fanned_out_at = now(), position = n.position
      FROM unnest(ARRAY(SELECT ctid FROM numbered), ARRAY(SELECT position FROM numbered)) AS n(ctid, position)
     WHERE e.ctid = n.ctid
    RETURNING e.id, e.type, e.application_id, e.data, e.occurred_at, e.position, e.teams, e.teams_all
  ),
  queued AS (
    INSERT INTO webhook_deliveries (id, webhook_id, event_id, status, next_attempt_at, created_at, updated_at)
    SELECT uuid_v7(), w.id, m.id, 'pending', now(), now(), now()
      FROM marked m JOIN webhooks w ON w.status <> 'disabled' AND m.type = ANY (w.events)
                            AND visible_to(m.teams, m.teams_all, NULLIF(w.teams, '{}'))
     ORDER BY m.position
  ),
  extended AS (
    UPDATE event_log_head SET position = (SELECT max(position) FROM marked) WHERE EXISTS (SELECT 1 FROM marked)
  ),
  -- Referenced below, so that it runs.
  notified AS (
    SELECT pg_notify('appsec_event_log', max(position)::text) FROM marked HAVING count(*) > 0
  ),
  counted AS (
    SELECT count(*)::integer AS n FROM marked WHERE (SELECT count(*) FROM notified) >= 0
  )
  SELECT c.n, m.id, m.type, m.application_id, m.data, m.occurred_at, m.position, m.teams, m.teams_all
    FROM counted c LEFT JOIN marked m ON return_events
   ORDER BY m.position;
END
$$;
