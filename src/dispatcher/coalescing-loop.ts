// A background loop that runs one step at a time and coalesces wake-ups: waking it while a step
// runs asks for one more step after it, however many times it was woken meanwhile.

export interface CoalescingLoop {
  /** Starts a step now, or one more after the step under way. */
  wake(): void;
  /** Resolves once no step is running. */
  idle(): Promise<void>;
}

export function createCoalescingLoop(options: {
  step: () => Promise<void>;
  /** Checked before every step: a loop whose owner stopped takes no more. */
  running: () => boolean;
  onError: (err: unknown) => void;
}): CoalescingLoop {
  let current: Promise<void> | undefined;
  let again = false;
  return {
    wake() {
      if (!options.running()) return;
      if (current) {
        again = true;
        return;
      }
      current = (async () => {
        do {
          again = false;
          try {
            await options.step();
          } catch (err) {
            options.onError(err);
          }
        } while (again && options.running());
        current = undefined;
      })();
    },
    idle: async () => {
      await current;
    },
  };
}
