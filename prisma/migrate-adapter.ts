// A @prisma/adapter-pg factory fixed for Prisma Migrate's Wasm schema engine (used only by
// prisma.config.ts; the service applies migrations itself, see src/db/migrate.ts).
// Works around four problems of @prisma/adapter-pg 6.19.3 under Migrate (see TOOLCHAIN.md):
// catalog columns of type `name`/`"char"`, executeScript splitting on `;`, the shadow database
// connection ignoring `database`, and the shadow database dropped before its pool closed.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { PrismaPg } from "@prisma/adapter-pg";

const TEXT_OID = 25;
const CATALOG_TEXT_OIDS = new Set([18 /* "char" */, 19 /* name */]);

type QueryResultLike = { fields?: { dataTypeID: number }[] };

function relabelCatalogText(result: unknown): void {
  for (const field of (result as QueryResultLike | undefined)?.fields ?? []) {
    if (CATALOG_TEXT_OIDS.has(field.dataTypeID)) field.dataTypeID = TEXT_OID;
  }
}

/** Their wire values are plain text, so the adapter can read them as text. */
class CatalogTextClient extends pg.Client {
  // pg.Pool calls query() with a callback, transactions call it without one: handle both.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg.Client.query's overloads return a Promise or void
  override query(...args: unknown[]): any {
    const last = args.at(-1);
    if (typeof last === "function") {
      args[args.length - 1] = (err: unknown, result: unknown) => {
        if (!err) relabelCatalogText(result);
        (last as (e: unknown, r: unknown) => void)(err, result);
      };
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const pending = (super.query as (...a: unknown[]) => unknown)(...args);
    if (pending && typeof (pending as Promise<unknown>).then === "function") {
      return (pending as Promise<unknown>).then((result) => {
        relabelCatalogText(result);
        return result;
      });
    }
    return pending;
  }
}

type Adapter = Awaited<ReturnType<PrismaPg["connect"]>> & { onError(e: unknown): never };

export class MigratePg extends PrismaPg {
  readonly #poolConfig: pg.PoolConfig;

  constructor(connectionString: string) {
    const poolConfig: pg.PoolConfig = {
      ...(parseIntoClientConfig(connectionString) as pg.PoolConfig),
      Client: CatalogTextClient as unknown as typeof pg.Client,
      allowExitOnIdle: true,
    };
    super(poolConfig);
    this.#poolConfig = poolConfig;
  }

  override async connect() {
    const adapter = (await super.connect()) as Adapter;
    // Send the whole migration script as one simple-protocol query: splitting on `;` breaks
    // dollar-quoted bodies and string literals.
    adapter.executeScript = async (script: string) => {
      try {
        await (adapter.underlyingDriver() as pg.Pool).query(script);
      } catch (error) {
        adapter.onError(error);
      }
    };
    return adapter;
  }

  override async connectToShadowDb() {
    const main = await this.connect();
    const database = `prisma_migrate_shadow_db_${randomUUID()}`;
    await main.executeScript(`CREATE DATABASE "${database}"`);
    const shadowFactory = new MigratePg("postgres://unused");
    (shadowFactory as unknown as { config: pg.PoolConfig }).config = { ...this.#poolConfig, database };
    const shadow = await shadowFactory.connect();
    const disposeShadow = shadow.dispose.bind(shadow);
    shadow.dispose = async () => {
      await disposeShadow();
      await main.executeScript(`DROP DATABASE IF EXISTS "${database}"`);
      await main.dispose();
    };
    return shadow;
  }
}
