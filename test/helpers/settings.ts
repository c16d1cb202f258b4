/**
 * A size a test takes from the environment (`npm run test:stress` raises
 * them): a whole number from `min` to `max`, `fallback` when unset; anything
 * else stops the run with one line naming the variable.
 */
export function wholeNumberSetting(name: string, fallback: number, min: number, max: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`Expected ${name} to be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}
