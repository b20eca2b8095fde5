import type pg from "pg";
import type { Actor } from "../auth/scopes.ts";
import type { Db } from "../db/client.ts";
import type { Logger } from "../log.ts";
import type { EngineSource } from "./scans/scan-source.ts";
import type { QueuedScanSignal } from "./scans/queued-scan-signal.ts";
import type { ScanType } from "./scans/scans.schemas.ts";
import type { SecretBox } from "./webhooks/secret-box.ts";

/** Settings the domain rules depend on (a subset of Config, so services stay testable). */
export interface DomainSettings {
  allowPrivateWebhookTargets: boolean;
  /** Seals webhook secrets before they are stored. */
  webhookSecrets: SecretBox;
  /** Scan types whose scans wait for a report from CI instead of the built-in engine (SCAN_ENGINES). */
  externalScanTypes: readonly ScanType[];
  /** What the built-in engine of each scan type records and needs (SCAN_ENGINES); none for external types. */
  scanEngines: Partial<Record<ScanType, { source?: EngineSource; needsServiceUrl: boolean }>>;
}

/** What every service call receives, whichever door (REST, GraphQL) it came through. */
export interface ServiceContext {
  db: Db;
  /** The same database through plain pg, for the hottest reads as prepared statements. */
  pool: pg.Pool;
  actor: Actor | undefined;
  log: Logger;
  settings: DomainSettings;
  /** Wakes agents long-polling for a scan to claim (POST /scan-jobs/claim?waitSeconds=). */
  scanQueue: QueuedScanSignal;
}
