import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApiError, AuthenticationError, ConflictError, ConnectionError, InvalidRequestError, NotFoundError, PermissionError, Platter,
  PlatterError, RateLimitError,
} from "../src/index.ts";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.ts";
import { closedPort, type SdkTestbed, startSdkTestbed } from "./sdk-testbed.ts";

/**
 * Every failure becomes a PlatterError subclass carrying the status, the server's error text and
 * the `x-request-id`. Real API errors come from the real API; 429, 409 and 5xx from the proxy.
 * Retries are off here (maxRetries: 0); retries.test.ts covers them.
 */

let bed: SdkTestbed;
let proxy: FaultProxy;

beforeAll(async () => {
  bed = await startSdkTestbed();
  proxy = await startFaultProxy(bed.baseUrl);
});
afterAll(async () => {
  await proxy?.close();
  await bed?.close();
});

/** The error a call rejects with; fails the test when it resolves. */
const failureOf = async (call: Promise<unknown>): Promise<PlatterError> => {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(PlatterError);
    expect(error).toBeInstanceOf(Error);
    return error as PlatterError;
  }
  throw new Error("expected the call to fail");
};

const REQUEST_ID = /^[\w.:-]+$/;

describe("errors answered by the API", () => {
  it("401 with a bad key is an AuthenticationError", async () => {
    const error = await failureOf(bed.platter({ apiKey: "platter_rw_not-a-real-key", maxRetries: 0 }).me.retrieve());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ name: "AuthenticationError", status: 401, message: "Missing, malformed or revoked API key" });
    expect(error.requestId).toMatch(REQUEST_ID);
  });

  it("403 for a create with a read-only key is a PermissionError", async () => {
    const error = await failureOf(bed.platter({ apiKey: bed.org.readKey }).clients.create({ name: "Nope" }));
    expect(error).toBeInstanceOf(PermissionError);
    expect(error).toMatchObject({ name: "PermissionError", status: 403, message: "This API key is read-only" });
    expect(error.requestId).toMatch(REQUEST_ID);
  });

  it.each([
    ["events", (p: Platter) => p.events.retrieve(987_654)],
    ["recipes", (p: Platter) => p.recipes.retrieve(987_654)],
    ["invoices", (p: Platter) => p.invoices.retrieve(987_654)],
  ])("404 for a missing %s record is a NotFoundError", async (_resource, call) => {
    const error = await failureOf(call(bed.platter()));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ name: "NotFoundError", status: 404, message: "Not found" });
    expect(error.requestId).toMatch(REQUEST_ID);
  });

  it("404 for another organization's record is a NotFoundError too", async () => {
    const other = await bed.newOrganization("Other");
    const { id } = await bed.platter({ apiKey: other.writeKey }).events.create({ name: "Theirs" });
    expect(await failureOf(bed.platter().events.retrieve(id))).toBeInstanceOf(NotFoundError);
  });

  it.each<[string, unknown, string]>([
    ["a missing name", {}, "name is required"],
    ["an unknown field", { name: "Gala", colour: "red" }, "unknown field: colour"],
    ["a wrong type", { name: "Gala", guests: "many" }, "guests must be an integer"],
  ])("400 for %s is an InvalidRequestError with the server's text", async (_label, input, message) => {
    const error = await failureOf(bed.platter().events.create(input as never));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ name: "InvalidRequestError", status: 400, message });
  });

  it("400 for a corrupted cursor is an InvalidRequestError", async () => {
    const error = await failureOf(bed.platter().clients.list({ cursor: "not-a-cursor" }).toArray());
    expect(error).toMatchObject({ name: "InvalidRequestError", status: 400, message: "Invalid cursor" });
  });

  it("413 for a body over 1 MiB is an InvalidRequestError", async () => {
    const error = await failureOf(bed.platter().clients.create({ name: "x".repeat(1024 * 1024 + 1) }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.status).toBe(413);
  });
});

describe("errors without a response", () => {
  it("a closed port is a ConnectionError with no status and no request id", async () => {
    const port = await closedPort();
    const error = await failureOf(new Platter({ apiKey: bed.org.readKey, baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 }).me.retrieve());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ name: "ConnectionError", status: undefined, requestId: undefined });
    expect(error.message).toMatch(/Could not reach the Platter API: GET \/me/);
    expect(error.cause).toBeDefined();
  });

  it("a dropped connection is a ConnectionError", async () => {
    proxy.failNext("disconnect");
    const error = await failureOf(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 0 }).me.retrieve());
    expect(error).toBeInstanceOf(ConnectionError);
  });

  it("a response slower than timeoutMs is a ConnectionError that says it timed out", async () => {
    proxy.failNext("stall");
    const error = await failureOf(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 0, timeoutMs: 200 }).me.retrieve());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toBe("Request timed out after 200 ms: GET /me");
  });
});

describe("errors injected by the proxy", () => {
  it("429 is a RateLimitError with the Retry-After in milliseconds", async () => {
    proxy.failNext({ status: 429, headers: { "retry-after": "7" } });
    const error = await failureOf(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 0 }).me.retrieve());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ name: "RateLimitError", status: 429, message: "Injected 429", retryAfterMs: 7000 });
    expect(error.requestId).toMatch(/^proxy_\d+$/);
  });

  it.each([500, 502, 503, 504])("%i is an ApiError", async (status) => {
    proxy.failNext({ status });
    const error = await failureOf(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 0 }).events.list().toArray());
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: "ApiError", status, message: `Injected ${status}` });
  });

  it("409 is a ConflictError", async () => {
    proxy.failNext({ status: 409 });
    const error = await failureOf(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 0 }).clients.create({ name: "Busy" }));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.status).toBe(409);
  });

  it.each([415, 422])("%i is an InvalidRequestError", async (status) => {
    proxy.failNext({ status });
    expect(await failureOf(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 0 }).clients.create({ name: "X" }))).toBeInstanceOf(
      InvalidRequestError,
    );
  });

  it("another 4xx is a plain PlatterError with its status", async () => {
    proxy.failNext({ status: 418 });
    const error = await failureOf(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 0 }).me.retrieve());
    expect(error.constructor).toBe(PlatterError);
    expect(error.status).toBe(418);
  });
});
