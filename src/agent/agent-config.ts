// The agent's configuration file (JSON), validated with a message that names the field at fault:
// per scan type an executor, either a command (an argv array with placeholders) or a built-in
// engine, plus how many scans to run at once.
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { TargetAllowList } from "../net/target-allow-list.ts";

/** The service's scan types and report formats (the agent is a client: it keeps its own copy). */
export const SCAN_TYPES = ["sast", "dast", "sca", "container"] as const;
export type ScanType = (typeof SCAN_TYPES)[number];
export const REPORT_FORMATS = ["sarif", "cyclonedx", "trivy", "grype", "zap"] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const PLACEHOLDERS = ["source", "serviceUrl", "report"] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
const PLACEHOLDER = /\{([A-Za-z]+)\}/g;

const commandExecutorSchema = z.strictObject({
  command: z
    .array(z.string())
    .min(1, { message: "Must name the program to run, then its arguments", abort: true })
    .refine((argv) => argv[0]!.trim() !== "", "The program (the first element) must not be empty")
    .superRefine((argv, ctx) => {
      for (const arg of argv) {
        for (const [, name] of arg.matchAll(PLACEHOLDER)) {
          if (!PLACEHOLDERS.includes(name as Placeholder)) {
            ctx.addIssue({
              code: "custom",
              message: `Unknown placeholder {${name}}: use {source}, {serviceUrl} or {report}`,
            });
          }
        }
      }
    }),
  format: z.enum(REPORT_FORMATS).optional(),
  timeoutSeconds: z.int().min(1).max(86_400).default(1800),
});

/** The baseline passive DAST's limits and the non-public targets it may reach (the service's DAST_* and SCAN_* settings). */
const engineExecutorSchema = z.strictObject({
  engine: z.enum(["baseline"]),
  maxPages: z.int().min(1).max(100_000).default(100),
  maxDurationSeconds: z.int().min(1).max(3600).default(60),
  concurrency: z.int().min(1).max(64).default(4),
  /** Every loopback, private and link-local address reachable: the agent's own network is the target. */
  allowPrivateTargets: z.boolean().default(false),
  /** Non-public hosts (`*.corp.example`), addresses and CIDR networks reachable all the same. */
  targetAllow: z
    .array(z.string())
    .default([])
    .superRefine((entries, ctx) => {
      try {
        TargetAllowList.parse(entries.join(","));
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    }),
});

export type CommandExecutorConfig = z.infer<typeof commandExecutorSchema>;
export type EngineExecutorConfig = z.infer<typeof engineExecutorSchema>;
export type ExecutorConfig = CommandExecutorConfig | EngineExecutorConfig;

/** An engine executor when it names one, else a command: errors then name the field at fault. */
const executorSchema = z.unknown().transform((value, ctx): ExecutorConfig => {
  const engine = typeof value === "object" && value !== null && "engine" in value;
  const parsed = (engine ? engineExecutorSchema : commandExecutorSchema).safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: "custom", path: issue.path });
  return z.NEVER;
});

export const agentConfigSchema = z.strictObject({
  executors: z
    .partialRecord(z.enum(SCAN_TYPES), executorSchema)
    .refine((executors) => Object.keys(executors).length > 0, "Configure an executor for at least one scan type")
    .superRefine((executors, ctx) => {
      for (const [type, executor] of Object.entries(executors)) {
        if (executor && "engine" in executor && type !== "dast") {
          ctx.addIssue({
            code: "custom",
            path: [type, "engine"],
            message: "The baseline engine scans running services: dast only",
          });
        }
      }
    }),
  concurrency: z.int().min(1).max(64).default(1),
  /** The agent's name in claims (default: the host's name). */
  name: z.string().min(1).max(200).optional(),
  leaseSeconds: z.int().min(30).max(3600).default(300),
  /** On SIGTERM, how long scans in progress may take to finish before they are handed back. */
  shutdownGraceSeconds: z.int().min(0).max(3600).default(30),
  /** Where work directories are made (default: the system's temporary directory). */
  workDir: z.string().min(1).optional(),
});

export type AgentConfig = z.infer<typeof agentConfigSchema>;

export class AgentConfigError extends Error {}

export function parseAgentConfig(value: unknown, source: string): AgentConfig {
  const parsed = agentConfigSchema.safeParse(value);
  if (!parsed.success)
    throw new AgentConfigError(`${source} is not a valid agent configuration:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export async function loadAgentConfig(file: string): Promise<AgentConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new AgentConfigError(`Cannot read ${file}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AgentConfigError(`${file} is not JSON: ${(err as Error).message}`);
  }
  return parseAgentConfig(value, file);
}
