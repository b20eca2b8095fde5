// Per request: every read under a list of applications (counts, latest scans, pages, totals)
// asked for in the same tick goes into ONE statement (readPerApplication), for every application
// asked about. A dashboard of N applications thus costs one statement for all its nested fields.
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import type { ServiceContext } from "../domain/context.ts";
import type { Page } from "../domain/pagination.ts";
import { readPerApplication, type PerApplicationRead, type PerApplicationValues } from "../domain/per-application.ts";
import { toConnection, type ConnectionShape } from "./connection.ts";
import { selectsField } from "./selection.ts";

interface Pending {
  applicationIds: Set<string>;
  reads: Map<string, PerApplicationRead<unknown>>;
  values: Promise<PerApplicationValues>;
}

export class PerApplicationBatch {
  private pending: Pending | undefined;
  private readonly readsByField = new WeakMap<readonly FieldNode[], unknown>();

  constructor(private readonly service: ServiceContext) {}

  /**
   * What `build` returns for this field, built once per request: the same field under every
   * application of a list shares its nodes, hence its arguments, so its reads (arguments
   * validated, SQL written) are the same for all of them.
   */
  readsFor<R>(info: GraphQLResolveInfo, build: () => R): R {
    if (this.readsByField.has(info.fieldNodes)) return this.readsByField.get(info.fieldNodes) as R;
    const reads = build();
    this.readsByField.set(info.fieldNodes, reads);
    return reads;
  }

  load<T>(applicationId: string, read: PerApplicationRead<T>): Promise<T> {
    const batch = (this.pending ??= this.start());
    batch.applicationIds.add(applicationId);
    if (!batch.reads.has(read.key)) batch.reads.set(read.key, read as PerApplicationRead<unknown>);
    return batch.values.then((values) => values.get(read.key)!.get(applicationId) as T);
  }

  /**
   * A connection of one application's rows: its page, and its totalCount in the same statement
   * when the selection reads it (otherwise read only if asked for later).
   */
  async connection<T extends { createdAt: Date; id: string }>(
    applicationId: string,
    info: GraphQLResolveInfo,
    after: string | undefined,
    pageRead: PerApplicationRead<Page<T>>,
    countRead: PerApplicationRead<number>,
  ): Promise<ConnectionShape<T>> {
    const count = selectsField(info, "totalCount") ? this.load(applicationId, countRead) : undefined;
    count?.catch(() => undefined); // its failure is the page's, reported there
    const items = await this.load(applicationId, pageRead);
    return toConnection(items, after, () => count ?? this.load(applicationId, countRead));
  }

  private start(): Pending {
    const applicationIds = new Set<string>();
    const reads = new Map<string, PerApplicationRead<unknown>>();
    // Sent after the current tick, once every sibling field has said what it needs.
    const values = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.pending = undefined;
      return readPerApplication(this.service.pool, [...applicationIds], [...reads.values()]);
    });
    return { applicationIds, reads, values };
  }
}
