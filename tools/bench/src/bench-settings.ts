/** How the benchmarks read their `BENCH_*` variables. */

/**
 * A whole number from the environment variable `name` (at least `minimum`), or `fallback` when it
 * is unset or empty; anything else stops the run with a message naming the variable.
 */
export const wholeNumberSetting = (name: string, fallback: number, minimum: 0 | 1): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < minimum) {
    throw new Error(`${name} must be a ${minimum === 1 ? "positive " : ""}whole number, got "${raw}"`);
  }
  return value;
};
