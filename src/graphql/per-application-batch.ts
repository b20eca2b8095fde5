// Per request: every read under a list of applications (counts, latest scans, pages, totals)
// asked for in the same tick goes into ONE statement (readPerApplication), for every application
// asked about. A dashboard of N applications thus costs one statement for all its nested fields.
import type { ServiceContext } from "../domain/context.ts";
import { readPerApplication, type PerApplicationRead, type PerApplicationValues } from "../domain/per-application.ts";

interface Pending {
  applicationIds: Set<string>;
  reads: Map<string, PerApplicationRead<unknown>>;
  values: Promise<PerApplicationValues>;
}

export class PerApplicationBatch {
  private pending: Pending | undefined;

  constructor(private readonly service: ServiceContext) {}

  load<T>(applicationId: string, read: PerApplicationRead<T>): Promise<T> {
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
