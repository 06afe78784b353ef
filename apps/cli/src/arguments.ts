import { parseDuration } from "@platter/ops";
import { UsageError } from "./failures.ts";

/** Argument definitions and checks shared by the commands. */

export const jsonFlag = {
  type: "boolean",
  description: "Print exactly one JSON object on stdout (messages go to stderr)",
  default: false,
} as const;

/** A positive integer argument such as an id, or a usage error naming it. */
export const positiveInteger = (name: string, raw: string | undefined): number => {
  const value = Number(raw);
  if (raw === undefined || !/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`--${name} must be a positive integer, got "${raw ?? ""}"`);
  }
  return value;
};

/** A count argument (zero allowed), or a usage error naming it. */
export const count = (name: string, raw: string | undefined): number => {
  const value = Number(raw);
  if (raw === undefined || !/^\d+$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new UsageError(`--${name} must be a non-negative integer, got "${raw ?? ""}"`);
  }
  return value;
};

/** One of a fixed set of words, or a usage error listing them. */
export const oneOf = <T extends string>(name: string, raw: string | undefined, allowed: readonly T[]): T => {
  if (raw === undefined || !(allowed as readonly string[]).includes(raw)) {
    throw new UsageError(`--${name} must be one of ${allowed.join(", ")}, got "${raw ?? ""}"`);
  }
  return raw as T;
};

/** A duration argument such as `30d`, `24h`, `90m` or `0`, in ms, or a usage error naming it. */
export const duration = (name: string, raw: string | undefined): number => {
  const ms = raw === "0" ? 0 : raw === undefined ? undefined : parseDuration(raw);
  if (ms === undefined) throw new UsageError(`--${name} must be a duration such as 30d, 24h or 90m, got "${raw ?? ""}"`);
  return ms;
};

/**
 * The `id` argument of commands that act on one record: `--id N`, the documented style, or the id
 * alone as the first positional argument (`platter webhook update 2 …`), accepted as an alias.
 * Read it with `givenId`.
 */
export const idArgument = (description: string) => ({ type: "string", description: `${description} (--id N, or N alone)` }) as const;

/** The id given as `--id N` or positionally (see `idArgument`), as a positive integer; a usage error when missing, given twice, or followed by stray words. */
export const givenId = (args: { readonly id?: string | undefined; readonly _: ReadonlyArray<string> }): number => {
  const [positional, ...stray] = args._;
  if (stray.length > 0) throw new UsageError(`unexpected argument "${stray[0]}": give the id once, as --id N or N alone`);
  if (positional !== undefined && args.id !== undefined) throw new UsageError("give the id once, as --id N or N alone, not both");
  if (positional === undefined && args.id === undefined) throw new UsageError("--id is required (or give the id alone: N)");
  return positiveInteger("id", args.id ?? positional);
};
