// Responses that stay open until their client leaves (SSE subscriptions) never finish by
// themselves, so a shutdown ends them: cleanly (the last chunk sent, no `complete` event), which
// clients take as a lost connection and reconnect, through the load balancer, to another instance.
export class LiveStreams {
  readonly #ends = new Set<() => void>();

  /** Registers how to end an open stream; call the returned function once it has ended. */
  add(end: () => void): () => void {
    this.#ends.add(end);
    return () => this.#ends.delete(end);
  }

  /** Ends every open stream; returns how many. */
  endAll(): number {
    const ends = [...this.#ends];
    this.#ends.clear();
    for (const end of ends) end();
    return ends.length;
  }
}
