import { Result } from "effect";
import { InvalidInput } from "./errors.ts";

/**
 * An API key's life: it may expire, and it may be rolled, replaced by a new key with a new secret
 * while the old one keeps working for a chosen overlap (so an integration can be redeployed with the
 * new key before the old one stops). An expired key is refused like an unknown one (401).
 */

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** Shortest lifetime a key may be given. */
export const MIN_KEY_LIFETIME_MS = HOUR_MS;
/** Longest lifetime a key may be given (or none: it never expires). */
export const MAX_KEY_LIFETIME_MS = 3 * 365 * DAY_MS;
/** Longest overlap of a rolled key (its old secret keeps working this long at most). */
export const MAX_ROLL_OVERLAP_MS = 30 * DAY_MS;

/** The lifetimes the Developer area offers, by the form's value (`never`: no expiry). */
export const KEY_LIFETIME_CHOICES = [
  { value: "never", label: "Never", ms: undefined },
  { value: "7d", label: "In 7 days", ms: 7 * DAY_MS },
  { value: "30d", label: "In 30 days", ms: 30 * DAY_MS },
  { value: "90d", label: "In 90 days", ms: 90 * DAY_MS },
  { value: "365d", label: "In a year", ms: 365 * DAY_MS },
] as const;

/** The overlaps the Developer area offers when a key is rolled, by the form's value. */
export const ROLL_OVERLAP_CHOICES = [
  { value: "0", label: "Stop the old key now", ms: 0 },
  { value: "1h", label: "1 hour", ms: HOUR_MS },
  { value: "24h", label: "24 hours", ms: DAY_MS },
  { value: "7d", label: "7 days", ms: 7 * DAY_MS },
] as const;

/** A key lifetime in ms (undefined: never expires) within `MIN_KEY_LIFETIME_MS`…`MAX_KEY_LIFETIME_MS`. */
export const checkKeyLifetime = (ms: number | undefined): Result.Result<number | undefined, InvalidInput> =>
  ms === undefined || (Number.isSafeInteger(ms) && ms >= MIN_KEY_LIFETIME_MS && ms <= MAX_KEY_LIFETIME_MS)
    ? Result.succeed(ms)
    : Result.fail(new InvalidInput({ message: "A key may expire in 1 hour at the soonest and in 3 years at the latest" }));

/** A roll's overlap in ms, from 0 (the old key stops at once) to `MAX_ROLL_OVERLAP_MS`. */
export const checkRollOverlap = (ms: number): Result.Result<number, InvalidInput> =>
  Number.isSafeInteger(ms) && ms >= 0 && ms <= MAX_ROLL_OVERLAP_MS
    ? Result.succeed(ms)
    : Result.fail(new InvalidInput({ message: "The old key may keep working for 30 days at most" }));

/** A choice's value as the form sent it, or `InvalidInput` naming what to pick. */
export const pickChoice = <C extends { readonly value: string }>(
  choices: ReadonlyArray<C>, value: string, what: string,
): Result.Result<C, InvalidInput> => {
  const choice = choices.find((candidate) => candidate.value === value);
  return choice === undefined ? Result.fail(new InvalidInput({ message: `Choose ${what}` })) : Result.succeed(choice);
};
