import type pg from "pg";
import type { Actor } from "../auth/scopes.ts";
import type { Db } from "../db/client.ts";
import type { Logger } from "../log.ts";
import type { SecretBox } from "./webhooks/secret-box.ts";

/** Settings the domain rules depend on (a subset of Config, so services stay testable). */
export interface DomainSettings {
  allowPrivateWebhookTargets: boolean;
  /** Seals webhook secrets before they are stored. */
  webhookSecrets: SecretBox;
}

/** What every service call receives, whichever door (REST, GraphQL) it came through. */
export interface ServiceContext {
  db: Db;
  /** The same database through plain pg, for the hottest reads as prepared statements. */
  pool: pg.Pool;
  actor: Actor | undefined;
  log: Logger;
  settings: DomainSettings;
}
