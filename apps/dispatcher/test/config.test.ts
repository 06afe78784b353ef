import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { DEFAULT_RETRY_SCHEDULE_MS } from "@platter/domain";
import { createTestDatabase } from "@platter/testing";
import { describe, expect, inject, it } from "vitest";
import { ConfigError, loadDispatcherConfig } from "../src/config.ts";

/** The dispatcher's environment, read once at start; a bad value stops it with the variable's name. */

describe("loadDispatcherConfig", () => {
  it("has defaults for everything but the database", () => {
    expect(loadDispatcherConfig({})).toMatchObject({
      databaseUrl: undefined,
      opsPort: 9465,
      opsHost: "127.0.0.1",
      concurrency: 256,
      retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
      timeoutMs: 15_000,
      leaseMs: 45_000,
      failureWindowMs: 5 * 24 * 60 * 60 * 1000,
      pollIntervalMs: 1000,
      signatureHeader: "x-platter-signature",
      allowPrivateNetworks: false,
      dns: { servers: undefined, timeoutMs: 5_000, cacheSize: 10_000, lookupsPerOrganization: 4 },
    });
  });

  it("serves its ops port where OPS_HOST says, apart from HOST", () => {
    expect(loadDispatcherConfig({ HOST: "127.0.0.1", OPS_HOST: "0.0.0.0" })).toMatchObject({ host: "127.0.0.1", opsHost: "0.0.0.0" });
  });

  it("reads the DNS settings, and keeps the DNS timeout within a shorter WEBHOOK_TIMEOUT by default", () => {
    expect(
      loadDispatcherConfig({
        WEBHOOK_DNS_SERVERS: "127.0.0.1:5353, 1.1.1.1,[::1]:53,2606:4700::1111",
        WEBHOOK_DNS_TIMEOUT: "2s",
        WEBHOOK_DNS_CACHE_SIZE: "50",
        WEBHOOK_DNS_LOOKUPS_PER_ORGANIZATION: "2",
      }).dns,
    ).toEqual({ servers: ["127.0.0.1:5353", "1.1.1.1", "[::1]:53", "2606:4700::1111"], timeoutMs: 2_000, cacheSize: 50, lookupsPerOrganization: 2 });
    expect(loadDispatcherConfig({ WEBHOOK_TIMEOUT: "1s", WEBHOOK_LEASE: "2s" }).dns.timeoutMs).toBe(1_000);
  });

  it("reads an organization's cap on attempts in flight, unset by default (all of a dispatcher's slots but a reserve)", () => {
    expect(loadDispatcherConfig({}).organizationConcurrency).toBeUndefined();
    expect(loadDispatcherConfig({ WEBHOOK_ORGANIZATION_CONCURRENCY: "100" }).organizationConcurrency).toBe(100);
    expect(() => loadDispatcherConfig({ WEBHOOK_ORGANIZATION_CONCURRENCY: "0" })).toThrow(/WEBHOOK_ORGANIZATION_CONCURRENCY/);
  });

  it("reads the connections per origin, 64 by default", () => {
    expect(loadDispatcherConfig({}).originConnections).toBe(64);
    expect(loadDispatcherConfig({ WEBHOOK_ORIGIN_CONNECTIONS: "8" }).originConnections).toBe(8);
    expect(() => loadDispatcherConfig({ WEBHOOK_ORIGIN_CONNECTIONS: "0" })).toThrow(/WEBHOOK_ORIGIN_CONNECTIONS/);
  });

  it("reads the test settings", () => {
    expect(
      loadDispatcherConfig({
        DATABASE_URL: "postgres://u:p@127.0.0.1:5432/db",
        WEBHOOK_RETRY_SCHEDULE: "0s,200ms,200ms",
        WEBHOOK_TIMEOUT: "1s",
        WEBHOOK_LEASE: "2s",
        DISPATCHER_POLL_INTERVAL: "200ms",
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        WEBHOOK_SIGNATURE_HEADER: "X-Acme-Signature",
      }),
    ).toMatchObject({
      databaseUrl: "postgres://u:p@127.0.0.1:5432/db",
      retryScheduleMs: [0, 200, 200],
      timeoutMs: 1000,
      leaseMs: 2000,
      pollIntervalMs: 200,
      allowPrivateNetworks: true,
      signatureHeader: "x-acme-signature",
    });
  });

  it("reads the operator channel: none by default; URL, secret and its own slots together", () => {
    const none = loadDispatcherConfig({});
    expect(none.operatorWebhook).toBeUndefined();
    expect(none).toMatchObject({ disableNoticeMs: 24 * 60 * 60 * 1000, notifyOperator: false });
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    expect(loadDispatcherConfig({ OPERATOR_WEBHOOK_URL: "https://ops.example/platter", OPERATOR_WEBHOOK_SECRET: secret, WEBHOOK_DISABLE_NOTICE: "2d" }))
      .toMatchObject({
        operatorWebhook: { url: "https://ops.example/platter", secret, concurrency: 4 }, notifyOperator: true, disableNoticeMs: 2 * 24 * 60 * 60 * 1000,
      });
  });

  it.each([
    [{ OPERATOR_WEBHOOK_URL: "https://ops.example/platter" }, /^OPERATOR_WEBHOOK_URL and OPERATOR_WEBHOOK_SECRET must be set together/],
    [{ OPERATOR_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }, /^OPERATOR_WEBHOOK_URL and OPERATOR_WEBHOOK_SECRET must be set together/],
    [{ OPERATOR_WEBHOOK_URL: "ftp://ops.example", OPERATOR_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }, /^OPERATOR_WEBHOOK_URL must be an http\(s\) URL/],
    [{ OPERATOR_WEBHOOK_URL: "https://ops.example", OPERATOR_WEBHOOK_SECRET: "whsec_short" }, /^OPERATOR_WEBHOOK_SECRET must be a Standard Webhooks secret/],
    [{ OPERATOR_WEBHOOK_URL: "https://ops.example", OPERATOR_WEBHOOK_SECRET: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }, /^OPERATOR_WEBHOOK_SECRET must be a Standard Webhooks secret/],
    [{ OPERATOR_WEBHOOK_URL: "https://ops.example", OPERATOR_WEBHOOK_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", OPERATOR_WEBHOOK_CONCURRENCY: "0" }, /^OPERATOR_WEBHOOK_CONCURRENCY must be an integer between 1 and 64/],
    [{ WEBHOOK_DISABLE_NOTICE: "soon" }, /^WEBHOOK_DISABLE_NOTICE must be a duration/],
    [{ WEBHOOK_RETRY_SCHEDULE: "0s,soon" }, /^WEBHOOK_RETRY_SCHEDULE must be durations/],
    [{ WEBHOOK_TIMEOUT: "15" }, /^WEBHOOK_TIMEOUT must be a duration/],
    [{ WEBHOOK_TIMEOUT: "0s" }, /^WEBHOOK_TIMEOUT must be at least 1ms/],
    [{ DISPATCHER_POLL_INTERVAL: "0ms" }, /^DISPATCHER_POLL_INTERVAL must be at least 1ms/],
    [{ WEBHOOK_TIMEOUT: "2s", WEBHOOK_LEASE: "2s" }, /^WEBHOOK_LEASE must be longer than WEBHOOK_TIMEOUT/],
    [{ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "maybe" }, /^WEBHOOK_ALLOW_PRIVATE_NETWORKS must be true or false/],
    [{ WEBHOOK_SIGNATURE_HEADER: "x sig" }, /^WEBHOOK_SIGNATURE_HEADER must be a header name/],
    [{ DISPATCHER_CONCURRENCY: "0" }, /^DISPATCHER_CONCURRENCY must be an integer between 1 and 10000/],
    [{ DATABASE_URL: "mysql://x" }, /^DATABASE_URL must be a postgres:\/\/ URL/],
    [{ WEBHOOK_DNS_SERVERS: "dns.example" }, /^WEBHOOK_DNS_SERVERS must be IP addresses/],
    [{ WEBHOOK_DNS_SERVERS: "127.0.0.1:99999" }, /^WEBHOOK_DNS_SERVERS must be IP addresses/],
    [{ WEBHOOK_DNS_TIMEOUT: "20s" }, /^WEBHOOK_DNS_TIMEOUT must be at most WEBHOOK_TIMEOUT \(15000 ms\)/],
    [{ WEBHOOK_DNS_CACHE_SIZE: "0" }, /^WEBHOOK_DNS_CACHE_SIZE must be an integer between 1/],
    [{ WEBHOOK_DNS_LOOKUPS_PER_ORGANIZATION: "0" }, /^WEBHOOK_DNS_LOOKUPS_PER_ORGANIZATION must be an integer between 1/],
  ])("refuses %o", (env, message) => {
    expect(() => loadDispatcherConfig(env)).toThrow(ConfigError);
    expect(() => loadDispatcherConfig(env)).toThrow(message);
  });
});

describe("main.ts", () => {
  it("exits 2 naming the variable when the configuration is bad", async () => {
    const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
    const child = spawn(process.execPath, ["--conditions=@platter/source", main], {
      env: { ...process.env, DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", WEBHOOK_RETRY_SCHEDULE: "whenever" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.once("exit", done));
    expect(code).toBe(2);
    expect(stderr.trim()).toBe('configuration error: WEBHOOK_RETRY_SCHEDULE must be durations like 0s,5s,5m, got "whenever"');
  });

  it("exits 2 with one line naming DISPATCHER_OPS_PORT when its port is already taken", async () => {
    const db = await createTestDatabase(inject("pgAdminUrl"));
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
    const port = (taken.address() as { port: number }).port;
    try {
      const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
      const child = spawn(process.execPath, ["--conditions=@platter/source", main], {
        env: { ...process.env, DATABASE_URL: db.url, HOST: "127.0.0.1", DISPATCHER_OPS_PORT: String(port), LOG_LEVEL: "warn" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((done) => child.once("exit", done));
      expect(code).toBe(2);
      expect(stderr.trim()).toBe(
        `configuration error: DISPATCHER_OPS_PORT: port ${port} on 127.0.0.1 is already in use; set DISPATCHER_OPS_PORT to a free port`,
      );
    } finally {
      taken.close();
      await db.dispose();
    }
  });
});
