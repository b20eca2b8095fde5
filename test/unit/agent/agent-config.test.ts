// The agent's configuration file: what it accepts, its defaults, and how it names what is wrong.
import { AgentConfigError, parseAgentConfig } from "../../../src/agent/agent-config.ts";
import { asReason } from "../../../src/agent/run-job.ts";

const semgrep = {
  command: ["semgrep", "scan", "--sarif", "--output", "{report}", "{source}"],
  format: "sarif",
  timeoutSeconds: 900,
};

describe("the agent's configuration", () => {
  it("takes command and engine executors per scan type, with defaults for the rest", () => {
    expect(
      parseAgentConfig({ executors: { sast: semgrep, dast: { engine: "baseline" } }, concurrency: 2 }, "agent.json"),
    ).toEqual({
      executors: {
        sast: semgrep,
        dast: {
          engine: "baseline",
          maxPages: 100,
          maxDurationSeconds: 60,
          concurrency: 4,
          allowPrivateTargets: false,
          targetAllow: [],
        },
      },
      concurrency: 2,
      leaseSeconds: 300,
      shutdownGraceSeconds: 30,
    });
    expect(
      parseAgentConfig({ executors: { sca: { command: ["osv-scanner", "scan", "{source}"] } } }, "a").executors.sca,
    ).toEqual({
      command: ["osv-scanner", "scan", "{source}"],
      timeoutSeconds: 1800,
    });
  });

  it.each([
    [{}, "executors"],
    [{ executors: {} }, "Configure an executor for at least one scan type"],
    [{ executors: { iast: semgrep } }, "executors"],
    [{ executors: { sast: { command: [] } } }, "Must name the program to run"],
    [{ executors: { sast: { command: [""] } } }, "The program (the first element) must not be empty"],
    [{ executors: { sast: { command: ["x", "--out={reprot}"] } } }, "Unknown placeholder {reprot}"],
    [{ executors: { sast: { ...semgrep, format: "xml" } } }, "executors.sast.format"],
    [{ executors: { sast: { ...semgrep, timeoutSeconds: 0 } } }, "executors.sast.timeoutSeconds"],
    [{ executors: { sast: { ...semgrep, shell: true } } }, "shell"],
    [{ executors: { sast: { engine: "baseline" } } }, "dast only"],
    [{ executors: { sast: semgrep }, concurrency: 0 }, "concurrency"],
    [{ executors: { sast: semgrep }, leaseSeconds: 10 }, "leaseSeconds"],
  ])("refuses %j, naming %s", (config, expected) => {
    expect(() => parseAgentConfig(config, "agent.json")).toThrow(AgentConfigError);
    expect(() => parseAgentConfig(config, "agent.json")).toThrow(expected);
  });

  it("keeps literal braces that are not placeholders", () => {
    const jq = { command: ["sh", "-c", "jq '{a: .b}' > {report}"] };
    expect(parseAgentConfig({ executors: { sca: jq } }, "a").executors.sca).toMatchObject(jq);
  });
});

describe("a failure reason", () => {
  it("is text the service stores: no U+0000 nor lone surrogate, at most 10,000 characters", () => {
    expect(asReason("a\u0000b")).toBe("a\uFFFDb");
    expect(asReason("\udca5tail of 💥")).toBe("\uFFFDtail of 💥");
    const long = asReason("é".repeat(20_000));
    expect(long.length).toBeLessThanOrEqual(10_000);
    expect(long.endsWith("… (truncated)")).toBe(true);
  });
});
