import { createHash } from "node:crypto";
import { Result } from "effect";
import { type IdempotencyKeyInProgress, type IdempotencyKeyReused, InvalidInput } from "./errors.ts";

/**
 * Idempotency: safe retries of creates. A key names one logical request of one organization for
 * 24 hours; a repeat with the same key and the same body replays the first response.
 */

/** How long a key is remembered. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

const PRINTABLE = /^[\x20-\x7e]{1,255}$/;

/** The `Idempotency-Key` header: absent, or 1–255 printable ASCII characters. */
export const parseIdempotencyKey = (header: string | undefined): Result.Result<string | undefined, InvalidInput> => {
  if (header === undefined) return Result.succeed(undefined);
  return PRINTABLE.test(header)
    ? Result.succeed(header)
    : Result.fail(new InvalidInput({ message: "Idempotency-Key must be 1 to 255 printable ASCII characters" }));
};

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
  }
  return value;
};

/** What makes two requests "the same": the endpoint and the body, key order and spacing aside. */
export const requestFingerprint = (endpoint: string, body: unknown): string =>
  createHash("sha256").update(endpoint).update("\n").update(JSON.stringify(canonical(body))).digest("hex");

/** An idempotent request: its key and fingerprint. */
export interface IdempotencyRequest {
  readonly key: string;
  readonly fingerprint: string;
}

/** The id of a newly created record; `replayed` when an earlier request with the same Idempotency-Key created it. */
export interface Created {
  readonly id: number;
  readonly replayed: boolean;
}

/** Why an idempotent create did not run. */
export type IdempotencyError = IdempotencyKeyReused | IdempotencyKeyInProgress;
