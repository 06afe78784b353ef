import { raw } from "@mikro-orm/postgresql";

/**
 * The one clock for what lasts: every time that decides access or work (a key's, a session's or a
 * sign-in link's expiry, a lease, a retention cut-off, an overlap) and every time written to say
 * when something happened is the database's `now()`, so processes on hosts whose clocks differ agree.
 * The process clock only measures durations (`performance.now()`).
 */

/** SQL for the database's time `ms` milliseconds from now (negative: ago), parenthesised. */
export const nowPlus = (ms: number): string => nowPlusSql(String(Math.trunc(ms)));

/** SQL for the database's time the SQL expression `ms` (milliseconds: a column, a parameter) from now, parenthesised. */
export const nowPlusSql = (ms: string): string => timePlusSql("now()", ms);

/** SQL for the time `ms` (an SQL expression, milliseconds) after the SQL time `time`, parenthesised. */
export const timePlusSql = (time: string, ms: string): string => `(${time} + ${ms} * interval '1 millisecond')`;

/** SQL for the time `ms` (an SQL expression, milliseconds) before the SQL time `time`, parenthesised. */
export const timeMinusSql = (time: string, ms: string): string => `(${time} - ${ms} * interval '1 millisecond')`;

/** The database's time `ms` from now as a value an entity insert writes (`orgSql.insert`). */
export const nowPlusValue = (ms = 0): Date => raw<Date>(ms === 0 ? "now()" : nowPlus(ms));
