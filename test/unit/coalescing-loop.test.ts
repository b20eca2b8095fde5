import { createCoalescingLoop } from "../../src/dispatcher/coalescing-loop.ts";

/** A step that waits until released, so a test decides when each step ends. */
function gatedSteps() {
  const releases: Array<() => void> = [];
  let started = 0;
  const step = () => {
    started++;
    return new Promise<void>((resolve) => releases.push(resolve));
  };
  const releaseNext = async () => {
    releases.shift()!();
    await new Promise((r) => setImmediate(r)); // let the loop decide whether to go round again
  };
  return { step, releaseNext, started: () => started };
}

describe("createCoalescingLoop", () => {
  it("runs one step at a time, and any number of wake-ups during a step make exactly one more", async () => {
    const steps = gatedSteps();
    const loop = createCoalescingLoop({ step: steps.step, running: () => true, onError: () => {} });
    loop.wake();
    loop.wake();
    loop.wake();
    expect(steps.started()).toBe(1);
    await steps.releaseNext();
    expect(steps.started()).toBe(2);
    await steps.releaseNext();
    expect(steps.started()).toBe(2); // no wake-up came during the second step
    await loop.idle();
    loop.wake();
    expect(steps.started()).toBe(3);
    await steps.releaseNext();
    await loop.idle();
  });

  it("takes no step once its owner stopped, not even one asked for before", async () => {
    const steps = gatedSteps();
    let running = true;
    const loop = createCoalescingLoop({ step: steps.step, running: () => running, onError: () => {} });
    loop.wake();
    loop.wake();
    running = false;
    await steps.releaseNext();
    await loop.idle();
    expect(steps.started()).toBe(1);
    loop.wake();
    expect(steps.started()).toBe(1);
  });

  it("reports a failed step and goes on with the next", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const loop = createCoalescingLoop({
      step: async () => {
        calls++;
        if (calls === 1) {
          loop.wake();
          throw new Error("step failed");
        }
      },
      running: () => true,
      onError: (err) => errors.push(err),
    });
    loop.wake();
    await new Promise((r) => setImmediate(r));
    await loop.idle();
    expect(errors).toEqual([new Error("step failed")]);
    expect(calls).toBe(2);
  });
});
