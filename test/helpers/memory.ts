/** Heap in use after a full collection, for the memory checks (run with --expose-gc). */

/** Heap in use after a full collection: what is retained, whenever the collector last ran. */
export function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('Expected gc() to be exposed: vitest.config.ts runs test workers with --expose-gc');
  gc();
  return process.memoryUsage().heapUsed;
}
