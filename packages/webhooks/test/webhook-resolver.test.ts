import { pbkdf2 } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type DnsResponder, startDnsResponder } from "../src/testing/dns-responder.ts";
import { type DnsSettings, WebhookResolver } from "../src/webhook-resolver.ts";

/** The webhook resolver against a DNS server of the test's own on 127.0.0.1, which never answers `dead*` names. */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const responder = async (ttl = 300): Promise<DnsResponder> => {
  const started = await startDnsResponder({
    answers: Object.fromEntries(["live.test", "other.test", "a.test", "b.test", "c.test"].map((n) => [n, { address: "127.0.0.1", ttl }])),
    silent: (name) => name.startsWith("dead"),
  });
  cleanups.push(started.close);
  return started;
};

const resolverOn = (dns: DnsResponder, settings: Partial<DnsSettings> = {}) => {
  const resolver = new WebhookResolver({ servers: [dns.server], timeoutMs: 2_000, cacheSize: 100, lookupsPerOrganization: 4, ...settings });
  cleanups.push(() => resolver.close());
  return resolver;
};

/** Polls `check` every 20 ms, 200 times at most. */
const eventually = async (what: string, check: () => boolean) => {
  for (let round = 0; round < 200; round++) {
    if (check()) return;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
};

describe("WebhookResolver", () => {
  it("answers from its cache within the TTL: the second lookup asks no server", async () => {
    const dns = await responder(300);
    const resolver = resolverOn(dns);
    expect(await resolver.lookup("live.test", 1)).toEqual([{ address: "127.0.0.1", family: 4 }]);
    expect(await resolver.lookup("LIVE.test.", 2)).toEqual([{ address: "127.0.0.1", family: 4 }]);
    expect(dns.questions("live.test", "A")).toBe(1);
  });

  it("asks again once the TTL has passed", async () => {
    const dns = await responder(1);
    const resolver = resolverOn(dns);
    await resolver.lookup("live.test", 1);
    await new Promise((done) => setTimeout(done, 1_200));
    await resolver.lookup("live.test", 1);
    expect(dns.questions("live.test", "A")).toBe(2);
  });

  it("keeps at most cacheSize names, dropping the least recently used", async () => {
    const dns = await responder(300);
    const resolver = resolverOn(dns, { cacheSize: 2 });
    for (const name of ["a.test", "b.test", "c.test", "c.test", "a.test"]) await resolver.lookup(name, 1);
    expect([dns.questions("a.test", "A"), dns.questions("b.test", "A"), dns.questions("c.test", "A")]).toEqual([2, 1, 1]);
  });

  it("fails a lookup the server never answers with ETIMEOUT, naming the host and the timeout", async () => {
    const dns = await responder();
    const resolver = resolverOn(dns, { timeoutMs: 300 });
    await expect(resolver.lookup("dead.test", 1)).rejects.toMatchObject({
      code: "ETIMEOUT",
      message: "DNS lookup of dead.test timed out after 300 ms",
    });
    expect(dns.questions("dead.test", "A")).toBeGreaterThanOrEqual(1);
  });

  it("fails a name without addresses with ENOTFOUND", async () => {
    const dns = await responder();
    await expect(resolverOn(dns).lookup("nowhere.test", 1)).rejects.toMatchObject({
      code: "ENOTFOUND",
      message: "DNS lookup of nowhere.test found no address",
    });
  });

  it("answers literal addresses and localhost itself, asking no server (c-ares reads no hosts file)", async () => {
    const dns = await responder();
    const resolver = resolverOn(dns);
    expect(await resolver.lookup("203.0.113.7", 1)).toEqual([{ address: "203.0.113.7", family: 4 }]);
    expect(await resolver.lookup("2001:db8::1", 1)).toEqual([{ address: "2001:db8::1", family: 6 }]);
    const loopback = [{ address: "127.0.0.1", family: 4 }, { address: "::1", family: 6 }];
    expect(await resolver.lookup("localhost", 1)).toEqual(loopback);
    expect(await resolver.lookup("hooks.localhost", 1)).toEqual(loopback);
    expect(dns.names()).toEqual([]);
  });

  it("lets one organization have only its few lookups in flight: the rest wait and time out, another organization's answer comes at once", async () => {
    const dns = await responder();
    const resolver = resolverOn(dns, { lookupsPerOrganization: 2, timeoutMs: 1_500 });
    const dead = ["dead1.test", "dead2.test", "dead3.test", "dead4.test", "dead5.test"].map((name) =>
      resolver.lookup(name, 1).then(() => "answered", (error: Error) => error.message),
    );
    await eventually("two dead names to be asked", () => dns.names().length === 2);

    expect(await resolver.lookup("live.test", 2)).toEqual([{ address: "127.0.0.1", family: 4 }]);
    // While the other organization was answered, the first had asked about two names, no more.
    expect(dns.names().filter((name) => name.startsWith("dead"))).toHaveLength(2);

    const outcomes = await Promise.all(dead);
    expect(outcomes).toEqual(["dead1", "dead2", "dead3", "dead4", "dead5"].map((n) => `DNS lookup of ${n}.test timed out after 1500 ms`));
  });

  it("gives sockets the answer their attempt's lookup cached, and lets the guard refuse it", async () => {
    const dns = await responder(300);
    const resolver = resolverOn(dns);
    await resolver.lookup("live.test", 1);
    const viaSocket = (check?: Parameters<WebhookResolver["socketLookup"]>[0]) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number }>((done) =>
        resolver.socketLookup(check)("live.test", { all: true }, (error, address, family) => done({ error, address, family })),
      );
    expect(await viaSocket()).toEqual({ error: null, address: [{ address: "127.0.0.1", family: 4 }], family: undefined });
    const refusal = Object.assign(new Error("refused"), { code: "ESSRF" });
    expect((await viaSocket(() => refusal)).error).toBe(refusal);
    expect(dns.questions("live.test", "A")).toBe(1);
  });

  it("holds none of libuv's four threads while a dozen organizations' lookups wait on a dead server", async () => {
    const dns = await responder();
    const resolver = resolverOn(dns, { timeoutMs: 1_500 });
    let settled = 0;
    const dead = Array.from({ length: 12 }, (_, org) => resolver.lookup(`dead${org}.test`, org).finally(() => settled++).catch(() => "timed out"));
    await eventually("every dead name to be asked", () => dns.names().length === 12);
    // Eight jobs on the thread pool (twice its four threads), as dns.lookup, fs and crypto use it.
    const jobs = Array.from({ length: 8 }, () => new Promise<void>((done, fail) => pbkdf2("secret", "salt", 1_000, 32, "sha256", (e) => (e ? fail(e) : done()))));
    await Promise.all(jobs);
    expect(settled).toBe(0);
    expect(await Promise.all(dead)).toEqual(Array(12).fill("timed out"));
  });
});
