#!/usr/bin/env bash
# A CI job acting as a scan agent with curl alone: claims the oldest queued sast scan (waiting up to
# 30 s for one), runs ESLint with the SARIF formatter, then completes the scan with the report, or
# fails it with ESLint's last lines of stderr. APPSEC_URL and APPSEC_TOKEN (scope scans:run) from
# the environment; run from a checkout of this repository (its ESLint sample stands in for your code).
set -euo pipefail
B=${APPSEC_URL:-http://localhost:8080}
AUTH="Authorization: Bearer $APPSEC_TOKEN"

job=$(curl -sf -X POST "$B/scan-jobs/claim?waitSeconds=30" -H "$AUTH" -H 'Content-Type: application/json' \
  -d "{\"scanTypes\":[\"sast\"],\"agent\":\"ci-${CI_JOB_ID:-local}\",\"leaseSeconds\":600}")
if [ -z "$job" ]; then echo "no sast scan is queued"; exit 0; fi   # 204: nothing to do
scan=$(jq -r .scan.id <<<"$job"); app=$(jq -r .application.id <<<"$job"); lease=$(jq -r .leaseId <<<"$job")
echo "claimed scan $scan of $(jq -r .application.name <<<"$job")"

rm -f eslint.sarif
# ESLint exits 1 when it finds errors, and still writes its report: a report present is a result.
if npx eslint -c test/fixtures/eslint-sample/eslint.config.mjs -f @microsoft/eslint-formatter-sarif \
     -o eslint.sarif test/fixtures/eslint-sample 2>eslint.err || [ -s eslint.sarif ]; then
  gzip -c eslint.sarif | curl -sf "$B/applications/$app/scans/$scan/report?leaseId=$lease&checkoutPath=$PWD" -H "$AUTH" \
    -H 'Content-Type: application/sarif+json' -H 'Content-Encoding: gzip' --data-binary @- | jq -c '{status, summary}'
else
  jq -n --arg reason "ESLint failed: $(tail -n 20 eslint.err)" --arg leaseId "$lease" '{reason: $reason, leaseId: $leaseId}' |
    curl -sf -X POST "$B/scan-jobs/$scan/fail" -H "$AUTH" -H 'Content-Type: application/json' -d @- | jq -c '{status, failure}'
fi
