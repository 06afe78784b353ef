import { describe, expect, it } from "vitest";
import {
  ApiError, AuthenticationError, ConflictError, ConnectionError, InvalidRequestError, NotFoundError, PermissionError, type PlatterError,
  RateLimitError,
} from "../src/errors.ts";
import { isRetryable, MAX_RETRY_AFTER_MS, retryAfterOf, retryDelayMs } from "../src/retry-policy.ts";

/** The retry rules as a table: which failures of which requests are retried, and how long to wait. */

const GET = { method: "GET" };
const KEYED_POST = { method: "POST", idempotencyKey: "k" };
const BARE_POST = { method: "POST" };

const withRetryAfter = (value: string) => new Headers({ "retry-after": value });

describe("isRetryable", () => {
  it.each<[string, PlatterError, boolean, boolean, boolean]>([
    // failure                         GET    POST+key POST
    ["ConnectionError", new ConnectionError("x"), true, true, false],
    ["429", new RateLimitError("x", { status: 429 }), true, true, false],
    ["500", new ApiError("x", { status: 500 }), true, true, false],
    ["503", new ApiError("x", { status: 503 }), true, true, false],
    ["409", new ConflictError("x", { status: 409 }), false, true, false],
    ["400", new InvalidRequestError("x", { status: 400 }), false, false, false],
    ["422", new InvalidRequestError("x", { status: 422 }), false, false, false],
    ["401", new AuthenticationError("x", { status: 401 }), false, false, false],
    ["403", new PermissionError("x", { status: 403 }), false, false, false],
    ["404", new NotFoundError("x", { status: 404 }), false, false, false],
  ])("%s: GET %s, POST with a key %s, POST without %s", (_label, error, get, keyedPost, barePost) => {
    expect([isRetryable(error, GET), isRetryable(error, KEYED_POST), isRetryable(error, BARE_POST)]).toEqual([get, keyedPost, barePost]);
  });

  it("does not retry when Retry-After asks for more than a minute", () => {
    const seconds = String(MAX_RETRY_AFTER_MS / 1000);
    expect(isRetryable(new RateLimitError("x", { status: 429, headers: withRetryAfter(seconds) }), GET)).toBe(true);
    expect(isRetryable(new RateLimitError("x", { status: 429, headers: withRetryAfter(`${seconds}.5`) }), GET)).toBe(false);
    expect(isRetryable(new ApiError("x", { status: 503, headers: withRetryAfter("3600") }), GET)).toBe(false);
  });
});

describe("retryDelayMs", () => {
  const almostOne = () => 0.999_999;
  it("backs off exponentially with full jitter, up to 8 s", () => {
    const error = new ApiError("x", { status: 503 });
    expect([0, 1, 2, 3, 4, 5, 10].map((retry) => retryDelayMs(retry, error, almostOne))).toEqual([499, 999, 1999, 3999, 7999, 7999, 7999]);
    expect([0, 1, 2, 3].map((retry) => retryDelayMs(retry, error, () => 0))).toEqual([0, 0, 0, 0]);
  });

  it("waits exactly the Retry-After when there is one", () => {
    expect(retryDelayMs(0, new RateLimitError("x", { status: 429, headers: withRetryAfter("2") }), almostOne)).toBe(2000);
    expect(retryDelayMs(3, new ApiError("x", { status: 503, headers: withRetryAfter("0") }), almostOne)).toBe(0);
  });
});

describe("retryAfterOf", () => {
  const now = Date.parse("2027-01-01T00:00:00Z");
  it.each<[string | undefined, number | undefined]>([
    [undefined, undefined],
    ["", undefined],
    ["0", 0],
    ["7", 7000],
    ["1.5", 1500],
    [" 3 ", 3000],
    ["Fri, 01 Jan 2027 00:00:30 GMT", 30_000],
    ["Thu, 31 Dec 2026 23:59:00 GMT", 0],
    ["soon", undefined],
    ["-5", undefined],
  ])("%j → %j ms", (value, expected) => {
    expect(retryAfterOf(value === undefined ? new Headers() : withRetryAfter(value), now)).toBe(expected);
  });
});
