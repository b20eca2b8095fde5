// Per request: every read under a list of applications (counts, latest scans, pages, totals)
// asked for in the same tick goes into ONE statement (readPerApplication), for every application
// asked about. A dashboard of N applications thus costs one statement for all its nested fields.
import type { FieldNode, GraphQLResolveInfo } from "graphql";
import type { ServiceContext } from "../domain/context.ts";
import type { Page } from "../domain/pagination.ts";
import { readPerApplication, type PerApplicationRead, type PerApplicationValues } from "../domain/per-application.ts";
import { toConnection, type ConnectionShape } from "./connection-shape.ts";
import { selectsField } from "./selection.ts";

interface Pending {
  applicationIds: Set<string>;
  reads: Map<string, PerApplicationRead<unknown>>;
  values: Promise<PerApplicationValues>;
}

/** What a connection field under an application reads: its page, its count, and where it starts. */
export interface ConnectionReads<T> {
  after: string | undefined;
  pageRead: PerApplicationRead<Page<T>>;
  countRead: PerApplicationRead<number>;
}

export class PerApplicationBatch {
  private pending: Pending | undefined;
  private readonly readsByField = new WeakMap<readonly FieldNode[], unknown>();

  constructor(private readonly service: ServiceContext) {}

  /** The value of one read for the application, the read built by `build` once per field (readsFor). */
  read<T>(applicationId: string, info: GraphQLResolveInfo, build: () => PerApplicationRead<T>): Promise<T> {
    return this.load(applicationId, this.readsFor(info, build));
  }

  /**
   * A connection of one application's rows: its page, and its totalCount in the same statement
   * when the selection reads it (otherwise read only if asked for later). `build` gives the reads
   * and the cursor the page starts after, built once per field (readsFor).
   */
  async connection<T extends { createdAt: Date; id: string }>(
    applicationId: string,
    info: GraphQLResolveInfo,
    build: () => ConnectionReads<T>,
  ): Promise<ConnectionShape<T>> {
    const { after, pageRead, countRead } = this.readsFor(info, build);
    const count = selectsField(info, "totalCount") ? this.load(applicationId, countRead) : undefined;
    count?.catch(() => undefined); // its failure is the page's, reported there
    const items = await this.load(applicationId, pageRead);
    return toConnection(items, after, () => count ?? this.load(applicationId, countRead));
  }

  /**
   * What `build` returns for this field, built once per request: the same field under every
   * application of a list shares its nodes, hence its arguments, so its reads (arguments
   * validated, SQL written) are the same for all of them.
   */
  private readsFor<R>(info: GraphQLResolveInfo, build: () => R): R {
    if (this.readsByField.has(info.fieldNodes)) return this.readsByField.get(info.fieldNodes) as R;
    const reads = build();
    this.readsByField.set(info.fieldNodes, reads);
    return reads;
  }

  private load<T>(applicationId: string, read: PerApplicationRead<T>): Promise<T> {
    const batch = (this.pending ??= this.start());
    batch.applicationIds.add(applicationId);
    if (!batch.reads.has(read.key)) batch.reads.set(read.key, read as PerApplicationRead<unknown>);
    return batch.values.then((values) => values.get(read.key)!.get(applicationId) as T);
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
