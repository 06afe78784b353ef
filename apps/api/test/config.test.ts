import { describe, expect, it } from "vitest";
import { ConfigError, loadApiConfig } from "../src/config.ts";

/** The API's rate-limit, proxy and request-budget settings: documented defaults, accepted forms, and a refusal naming the variable. */

describe("API configuration", () => {
  it("has the documented defaults", () => {
    const config = loadApiConfig({});
    expect(config.rateLimits).toEqual({
      requestsPerSecond: 100, requestBurst: 200, createsPerSecond: 20, createBurst: 40, keyRequestsPerSecond: 100, keyRequestBurst: 200,
      authFailures: 20, authFailureWindowSeconds: 60,
    });
    expect(config.trustProxy).toEqual({ kind: "none" });
    expect(config.requestDatabaseTimeoutMs).toBe(4_000);
    expect(config.replicas).toEqual({ urls: [], maxLagMs: 1_000, timeoutMs: 1_000, readYourWritesMs: 5_000 });
  });

  it("reads the replicas and their bounds", () => {
    const config = loadApiConfig({
      DATABASE_REPLICA_URLS: "postgres://r1.internal/platter, postgresql://r2.internal:6432/platter",
      DATABASE_REPLICA_MAX_LAG: "2s",
      DATABASE_REPLICA_TIMEOUT: "300ms",
      READ_YOUR_WRITES_WINDOW: "10s",
    });
    expect(config.replicas).toEqual({
      urls: ["postgres://r1.internal/platter", "postgresql://r2.internal:6432/platter"], maxLagMs: 2_000, timeoutMs: 300, readYourWritesMs: 10_000,
    });
  });

  it("reads a key's own limit, which follows the organization's unless set", () => {
    expect(loadApiConfig({ RATE_LIMIT: "10", RATE_LIMIT_BURST: "20" }).rateLimits).toMatchObject({ keyRequestsPerSecond: 10, keyRequestBurst: 20 });
    expect(loadApiConfig({ RATE_LIMIT_KEY: "5", RATE_LIMIT_KEY_BURST: "10" }).rateLimits).toMatchObject({ keyRequestsPerSecond: 5, keyRequestBurst: 10 });
  });

  it.each([
    ["false", { kind: "none" }],
    ["0", { kind: "none" }],
    ["1", { kind: "hops", hops: 1 }],
    ["3", { kind: "hops", hops: 3 }],
    ["loopback", { kind: "addresses", addresses: ["loopback"] }],
    ["10.0.0.0/8, 192.168.1.7,fd00::/8", { kind: "addresses", addresses: ["10.0.0.0/8", "192.168.1.7", "fd00::/8"] }],
  ])("reads TRUST_PROXY=%s", (value, expected) => {
    expect(loadApiConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each([
    [{ RATE_LIMIT_KEY: "101" }, /^RATE_LIMIT_KEY must be at most RATE_LIMIT \(100\)/],
    [{ RATE_LIMIT_BURST: "50", RATE_LIMIT_KEY_BURST: "60" }, /^RATE_LIMIT_KEY_BURST must be at most RATE_LIMIT_BURST \(50\)/],
    [{ RATE_LIMIT_AUTH_FAILURES: "0" }, /^RATE_LIMIT_AUTH_FAILURES must be an integer/],
    [{ RATE_LIMIT_AUTH_FAILURES_WINDOW: "500ms" }, /^RATE_LIMIT_AUTH_FAILURES_WINDOW must be at least 1000ms/],
    [{ TRUST_PROXY: "11" }, /^TRUST_PROXY must be an integer between 1 and 10/],
    [{ TRUST_PROXY: "proxy.internal" }, /^TRUST_PROXY must be false, a number of proxies/],
    [{ TRUST_PROXY: "10.0.0.0/99" }, /^TRUST_PROXY must be false, a number of proxies/],
    [{ TRUST_PROXY: "true" }, /^TRUST_PROXY must be false, a number of proxies/],
    [{ REQUEST_DATABASE_TIMEOUT: "5" }, /^REQUEST_DATABASE_TIMEOUT must be a duration/],
    [{ REQUEST_DATABASE_TIMEOUT: "50ms" }, /^REQUEST_DATABASE_TIMEOUT must be at least 100ms/],
    [{ DATABASE_REPLICA_URLS: "postgres://r1/p,mysql://r2/p" }, /^DATABASE_REPLICA_URLS \(entry 2\) must be a postgres:\/\/ URL/],
    [{ DATABASE_REPLICA_MAX_LAG: "50ms" }, /^DATABASE_REPLICA_MAX_LAG must be at least 100ms/],
    [{ DATABASE_REPLICA_MAX_LAG: "10s" }, /^READ_YOUR_WRITES_WINDOW \(5000ms\) must be at least DATABASE_REPLICA_MAX_LAG \(10000ms\)/],
    [{ DATABASE_REPLICA_TIMEOUT: "soon" }, /^DATABASE_REPLICA_TIMEOUT must be a duration/],
  ])("refuses %o, naming the variable", (env, message) => {
    expect(() => loadApiConfig(env)).toThrow(ConfigError);
    expect(() => loadApiConfig(env)).toThrow(message);
  });
});
