// Per-request batching (what DataLoader does, in a few lines): every key asked for in the same tick
// goes to ONE call of `load`, so a list of N parents costs one query per field, not N.
export type BatchLoad<K, V> = (keys: readonly K[]) => Promise<Map<K, V>>;

export function batcher<K, V>(load: BatchLoad<K, V>, missing: (key: K) => V): (key: K) => Promise<V> {
  let pending: { keys: Set<K>; result: Promise<Map<K, V>> } | undefined;
  return (key) => {
    if (!pending) {
      const keys = new Set<K>();
      const batch = {
        keys,
        // Resolved after the current tick, once every sibling resolver has registered its key.
        result: new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
          pending = undefined;
          return load([...keys]);
        }),
      };
      pending = batch;
    }
    pending.keys.add(key);
    return pending.result.then((values) => (values.has(key) ? values.get(key)! : missing(key)));
  };
}

/** One batcher per distinct argument set (e.g. per filter), created on first use in a request. */
export class BatcherRegistry {
  private readonly batchers = new Map<string, (key: never) => Promise<unknown>>();

  get<K, V>(name: string, args: unknown, load: BatchLoad<K, V>, missing: (key: K) => V): (key: K) => Promise<V> {
    const id = `${name}:${JSON.stringify(args ?? null)}`;
    let b = this.batchers.get(id);
    if (!b) {
      b = batcher(load, missing) as (key: never) => Promise<unknown>;
      this.batchers.set(id, b);
    }
    return b as unknown as (key: K) => Promise<V>;
  }
}
