import { runTeamsLiveBench } from "./teams-live.ts";
try { await runTeamsLiveBench(); } catch (err) { console.error("FAILED", err, (err as any)?.stack); }
