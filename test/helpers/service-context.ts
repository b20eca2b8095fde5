// A domain service context for tests that call services directly: an admin caller, on `db`.
import type { Database } from "../../src/db/client.ts";
import type { ServiceContext } from "../../src/domain/context.ts";
import { createQueuedScanSignal } from "../../src/domain/scans/queued-scan-signal.ts";
import { createLogger } from "../../src/log.ts";
import { testSecretBox } from "./test-app.ts";

export function adminServiceContext(db: Database): ServiceContext {
  return {
    db: db.prisma,
    pool: db.pool,
    actor: { sub: "reader", scopes: new Set(["admin"]), exp: Number.MAX_SAFE_INTEGER, teams: null, orgWide: true },
    log: createLogger("silent"),
    settings: {
      allowPrivateWebhookTargets: false,
      webhookSecrets: testSecretBox(),
      externalScanTypes: [],
      scanEngines: {},
    },
    // Listens only once an agent waits for a scan: none does in these tests.
    scanQueue: createQueuedScanSignal(db.pool, createLogger("silent")),
  };
}
