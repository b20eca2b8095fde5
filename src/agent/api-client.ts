// The agent's view of the service: the REST routes it calls, with its token (asked for each call:
// a client credentials token is renewed as it ages), over one keep-alive connection pool (undici).
// The token goes in the Authorization header and nowhere else.
import { createReadStream } from "node:fs";
import { createGzip } from "node:zlib";
import { Agent, request, type Dispatcher } from "undici";
import type { MachineTokens } from "../auth/machine-tokens.ts";
import type { ReportFormat, ScanType } from "./agent-config.ts";
import type { Job } from "./executor.ts";

export interface ClaimedJob extends Job {
  leaseId: string;
  leaseExpiresAt: string;
}

/** What `POST /scan-jobs/claim` answers with a job (docs/spec/CONTRACT.md §12). */
interface ClaimAnswer {
  scan: { id: string; scanType: ScanType };
  application: Job["application"];
  leaseId: string;
  leaseExpiresAt: string;
}

/** A problem+json answer (or any non-2xx one). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: { detail?: string; errors?: { path: string; message: string }[] } | null,
    what: string,
  ) {
    const errors = problem?.errors?.map((e) => `${e.path || "(document)"}: ${e.message}`) ?? [];
    super([`${what}: ${status}${problem?.detail ? ` ${problem.detail}` : ""}`, ...errors].join("\n  "));
    this.name = "ApiError";
  }

  /** The service will answer the same again (a bad request, a bad token, a missing scope); status 0: unreachable. */
  get permanent(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429;
  }
}

export interface ApiClient {
  claim(
    input: { scanTypes: readonly ScanType[]; agent: string; leaseSeconds: number; waitSeconds: number },
    signal: AbortSignal,
  ): Promise<ClaimedJob | null>;
  heartbeat(job: ClaimedJob): Promise<void>;
  fail(job: ClaimedJob, reason: string): Promise<void>;
  release(job: ClaimedJob): Promise<void>;
  uploadReport(
    job: ClaimedJob,
    report: { path: string; format?: ReportFormat; checkoutPath?: string },
    signal: AbortSignal,
  ): Promise<void>;
  close(): Promise<void>;
}

export function createApiClient(baseUrl: string, tokens: MachineTokens): ApiClient {
  // Long polls wait up to 30 s for their answer's headers; uploads may take a while to be read.
  const dispatcher = new Agent({ headersTimeout: 120_000, bodyTimeout: 120_000, keepAliveTimeout: 30_000 });
  async function call<Body = unknown>(
    what: string,
    method: Dispatcher.HttpMethod,
    path: string,
    options: {
      json?: unknown;
      body?: NodeJS.ReadableStream;
      headers?: Record<string, string>;
      signal?: AbortSignal;
    } = {},
  ): Promise<{ status: number; body: Body }> {
    let authorization: string;
    try {
      authorization = `Bearer ${await tokens.token()}`;
    } catch (err) {
      throw new ApiError(0, { detail: `could not get a token from ${tokens.source}: ${(err as Error).message}` }, what);
    }
    let res: Dispatcher.ResponseData;
    try {
      res = await send(path, method, authorization, options);
    } catch (err) {
      if (options.signal?.aborted) throw err;
      throw new ApiError(0, { detail: `could not reach ${baseUrl}: ${(err as Error).message}` }, what);
    }
    const text = await res.body.text().catch(() => "");
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (res.statusCode >= 400) throw new ApiError(res.statusCode, body as ApiError["problem"], what);
    return { status: res.statusCode, body: body as Body };
  }

  function send(
    path: string,
    method: Dispatcher.HttpMethod,
    authorization: string,
    options: { json?: unknown; body?: NodeJS.ReadableStream; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Dispatcher.ResponseData> {
    return request(new URL(path, baseUrl), {
      method,
      dispatcher,
      signal: options.signal,
      headers: {
        authorization,
        ...(options.json !== undefined && { "content-type": "application/json" }),
        ...options.headers,
      },
      body:
        options.json !== undefined
          ? JSON.stringify(options.json)
          : (options.body as Dispatcher.DispatchOptions["body"]),
    });
  }

  const lease = (job: ClaimedJob) => `/scan-jobs/${encodeURIComponent(job.scanId)}`;

  return {
    async claim(input, signal) {
      const { status, body } = await call<ClaimAnswer>(
        "claim",
        "POST",
        `/scan-jobs/claim?waitSeconds=${input.waitSeconds}`,
        {
          json: { scanTypes: input.scanTypes, agent: input.agent, leaseSeconds: input.leaseSeconds },
          signal,
        },
      );
      if (status === 204) return null;
      const { scan, application, leaseId, leaseExpiresAt } = body;
      return {
        scanId: scan.id,
        scanType: scan.scanType,
        application: {
          id: application.id,
          name: application.name,
          repoUrl: application.repoUrl,
          serviceUrl: application.serviceUrl,
        },
        leaseId,
        leaseExpiresAt,
      };
    },
    async heartbeat(job) {
      await call("heartbeat", "POST", `${lease(job)}/heartbeat`, { json: { leaseId: job.leaseId } });
    },
    async fail(job, reason) {
      await call("fail", "POST", `${lease(job)}/fail`, { json: { reason, leaseId: job.leaseId } });
    },
    async release(job) {
      await call("release", "POST", `${lease(job)}/release`, { json: { leaseId: job.leaseId } });
    },
    async uploadReport(job, report, signal) {
      const query = new URLSearchParams({ leaseId: job.leaseId });
      if (report.format) query.set("format", report.format);
      if (report.checkoutPath) query.set("checkoutPath", report.checkoutPath);
      const path = `/applications/${encodeURIComponent(job.application.id)}/scans/${encodeURIComponent(job.scanId)}/report?${query}`;
      await call("report upload", "POST", path, {
        body: createReadStream(report.path).pipe(createGzip()),
        headers: { "content-type": "application/json", "content-encoding": "gzip" },
        signal,
      });
    },
    close: () => dispatcher.close(),
  };
}
