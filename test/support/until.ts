/**
 * Reads `read()` every `everyMs` until `done` holds or `timeoutMs` passes, and answers the last
 * value either way, so that the test's own assertion on it reports what was there.
 */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
