import { Result } from "effect";
import { InvalidInput } from "./errors.ts";

/**
 * The times and days a filter, form or query may name, and how they are read. One range for every
 * reader: years 1900 to 9998 (UTC). PostgreSQL refuses year 0 (`0000-01-01`), and JavaScript
 * prints years past 9999 as `+010000-…`, which PostgreSQL cannot read either; ending at 9998 keeps
 * every value derived from an accepted one (a day's end, the next day) inside what both handle.
 */

/** The first and last years a time or day given as input may fall in (UTC). */
export const ACCEPTED_YEARS = { first: 1900, last: 9998 } as const;

/** The accepted range in words, for error texts: `between 1900-01-01 and 9998-12-31`. */
export const ACCEPTED_RANGE_TEXT = `between ${ACCEPTED_YEARS.first}-01-01 and ${ACCEPTED_YEARS.last}-12-31`;

/** Whether `iso` (an ISO 8601 UTC time, as `Date#toISOString` prints one) falls in `ACCEPTED_YEARS`. */
export const isAcceptedTime = (iso: string): boolean => {
  const year = Number(iso.slice(0, 4));
  return /^\d{4}-/.test(iso) && year >= ACCEPTED_YEARS.first && year <= ACCEPTED_YEARS.last;
};

/** `2026-11-24T10:05`, `…:30`, `…:30.5`, with an optional `Z`: a time read as UTC (what a `datetime-local` field sends). */
const UTC_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?Z?$/;

/** A day as a `date` field sends it. */
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** `iso` when it names an instant that exists (no Feb 30, no 25:00, which `Date.parse` would roll over), else `undefined`. */
const existing = (iso: string): string | undefined => {
  const time = Date.parse(iso);
  return Number.isNaN(time) || new Date(time).toISOString() !== iso ? undefined : iso;
};

/**
 * Reads the time in field `field` (UTC, to the millisecond: `YYYY-MM-DDTHH:MM[:SS[.mmm]][Z]`) as
 * ISO 8601 with milliseconds; one that is not a time, or falls outside `ACCEPTED_YEARS`, is
 * `InvalidInput` naming the field.
 */
export const readUtcTime = (text: string, field: string): Result.Result<string, InvalidInput> => {
  const match = UTC_TIME.exec(text.trim());
  const iso = match === null
    ? undefined
    : existing(`${match[1]}T${match[2]}:${match[3]}:${match[4] ?? "00"}${(match[5] ?? ".000").padEnd(4, "0")}Z`);
  if (iso === undefined) return Result.fail(new InvalidInput({ message: `${field} must be a time written YYYY-MM-DDTHH:MM (UTC)` }));
  if (!isAcceptedTime(iso)) return Result.fail(new InvalidInput({ message: `${field} must be a time ${ACCEPTED_RANGE_TEXT} (UTC)` }));
  return Result.succeed(iso);
};

/**
 * Reads the day in field `field` (`YYYY-MM-DD`, UTC) as the ISO time it starts; one that is not a
 * day, or falls outside `ACCEPTED_YEARS`, is `InvalidInput` naming the field.
 */
export const readUtcDay = (text: string, field: string): Result.Result<string, InvalidInput> => {
  const iso = DAY.test(text) ? existing(`${text}T00:00:00.000Z`) : undefined;
  if (iso === undefined) return Result.fail(new InvalidInput({ message: `${field} must be a date written YYYY-MM-DD` }));
  if (!isAcceptedTime(iso)) return Result.fail(new InvalidInput({ message: `${field} must be a date ${ACCEPTED_RANGE_TEXT}` }));
  return Result.succeed(iso);
};

const DAY_MS = 86_400_000;

/** The start of the day after the one `dayStart` (an accepted day's start) begins: still a storable time, by `ACCEPTED_YEARS`. */
export const nextDayStart = (dayStart: string): string => new Date(Date.parse(dayStart) + DAY_MS).toISOString();
