// The views' refreshes: a count a view bumps when what its queries showed may be out of date (a
// scan finished, a decision changed, a drop the replay could not bridge).
import { useEffect } from "preact/hooks";

/** A query's result, refetched from the network on every refresh after the first render. */
export function useRefreshed<Q>(
  result: Q,
  refetch: (opts: { requestPolicy: "network-only" }) => void,
  refreshes: number,
): Q {
  useEffect(() => {
    if (refreshes > 0) refetch({ requestPolicy: "network-only" });
  }, [refreshes]);
  return result;
}
