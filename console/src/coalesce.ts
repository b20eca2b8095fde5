import { useEffect, useRef } from "preact/hooks";

/**
 * `fn` called at most once per `ms`, at the end of a burst of calls (a hundred scans finishing in a
 * second refetch once, not a hundred times).
 */
export function useCoalesced(fn: () => void, ms: number): () => void {
  const latest = useRef(fn);
  latest.current = fn;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const call = useRef(() => {
    if (timer.current !== undefined) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      latest.current();
    }, ms);
  });
  return call.current;
}
