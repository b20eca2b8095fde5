/** Waits until the service at `base` answers /readyz with 200 (30 s at most). */
export async function untilReady(base: string): Promise<void> {
  for (let i = 0; ; i++) {
    if (
      await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    if (i > 300) throw new Error("the service did not become ready");
    await new Promise((r) => setTimeout(r, 100));
  }
}
