/** Polls `check` until it gives a value (not null), or fails naming `what` once `ms` have passed. */
export async function until<T>(
  what: string,
  check: () => Promise<T | null> | T | null,
  ms = 90_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
