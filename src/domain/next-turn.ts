/**
 * Resolves on the event loop's next turn: a long computation (10,000 VEX statements) awaits it
 * between slices, so the requests of other callers are served in between instead of after it.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
