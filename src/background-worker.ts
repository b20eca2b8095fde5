/** Something that works in the background (scan runner, delivery dispatcher, event retention). */
export interface BackgroundWorker {
  readonly name: string;
  start(): void;
  /** Stops taking work and releases what it holds. */
  stop(): Promise<void>;
}
