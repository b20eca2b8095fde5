// BENCH_SERVICE_FLAGS: Node flags for the service processes the suites start, e.g.
// `--max-old-space-size=160` (does it fit in that heap?) or V8 flags NODE_OPTIONS does not take.
export const serviceFlags = (): string[] => process.env.BENCH_SERVICE_FLAGS?.split(/\s+/).filter(Boolean) ?? [];
