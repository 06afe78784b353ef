import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedLookup, isForbiddenAddress, urlRefusal } from "../src/ssrf-guard.ts";
import { type DnsResponder, startDnsResponder } from "../src/testing/dns-responder.ts";
import { WebhookResolver } from "../src/webhook-resolver.ts";

/** The refusal's wording after the host: it never says what the host resolves to. */
const NOT_ALLOWED = "is not allowed: webhooks are sent only to public internet addresses";

describe("isForbiddenAddress", () => {
  it.each([
    ["127.0.0.1", "IPv4 loopback"],
    ["127.255.0.9", "the rest of 127/8"],
    ["10.0.0.1", "private 10/8"],
    ["10.255.255.254", "private 10/8, top"],
    ["172.16.0.1", "private 172.16/12"],
    ["172.31.255.1", "private 172.16/12, top"],
    ["192.168.1.1", "private 192.168/16"],
    ["169.254.169.254", "cloud metadata (link-local)"],
    ["169.254.0.1", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.254", "carrier-grade NAT, top"],
    ["0.0.0.0", "this host"],
    ["224.0.0.1", "multicast"],
    ["::1", "IPv6 loopback"],
    ["::", "IPv6 unspecified"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local (fd)"],
    ["fe80::1", "IPv6 link-local"],
    ["fec0::1", "site-local (deprecated, RFC 3879)"],
    ["feff:ffff::1", "site-local, top of fec0::/10"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:169.254.169.254", "IPv4-mapped metadata"],
    ["::ffff:7f00:1", "IPv4-mapped loopback, hex form (as URL parsing writes it)"],
    ["::127.0.0.1", "IPv4-compatible loopback (deprecated form)"],
    ["::7f00:1", "IPv4-compatible loopback, hex form (as URL parsing writes it)"],
    ["::a00:1", "IPv4-compatible 10.0.0.1"],
    ["::8.8.8.8", "IPv4-compatible, even of a public address: the form is deprecated and never routed"],
    ["::ffff:0:7f00:1", "IPv4-translated (SIIT) loopback"],
    ["64:ff9b::7f00:1", "NAT64 well-known prefix, 127.0.0.1 behind it"],
    ["64:ff9b::a9fe:a9fe", "NAT64 well-known prefix, cloud metadata behind it"],
    ["64:ff9b:1::a00:1", "NAT64 local-use prefix (RFC 8215), 10.0.0.1 behind it"],
    ["64:ff9b:1:ffff::1", "NAT64 local-use prefix, top of the /48"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
    ["2001::1", "Teredo, first of the /32"],
    ["2002:7f00:1::1", "6to4 of 127.0.0.1"],
    ["2002:a9fe:a9fe::1", "6to4 of the metadata address"],
    ["100::1", "discard-only"],
    ["ff02::1", "IPv6 multicast"],
    ["not an address", "something that is not an IP at all"],
  ])("refuses %s (%s)", (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    ["8.8.8.8"],
    ["1.1.1.1"],
    ["172.32.0.1"], // just outside 172.16/12
    ["100.128.0.1"], // just outside 100.64/10
    ["2606:4700::1111"],
    ["2001:4860:4860::8888"],
    ["::ffff:8.8.8.8"], // a mapped public address is judged by its IPv4 part
    ["::ffff:808:808"],
    ["2001:db9::1"], // just outside Teredo's 2001::/32 (the /32 ends at 2001:0:ffff:ffff::)
    ["2001:1::1"],
    ["64:ff9b:2::1"], // just outside the local-use NAT64 /48
  ])("allows %s", (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

/** The guard's refusal of `host` for an internal address: it names the host given, never what it resolves to. */
const forbidden = (host: string) => ({ reason: "forbidden", host });

/** The guard's refusal of a host name without a public address: the same whether it resolves internally or not at all. */
const noPublicAddress = (host: string) => ({ reason: "no-public-address", host });

describe("urlRefusal", () => {
  it("refuses URLs that are not http(s), with or without the guard", async () => {
    for (const allowPrivate of [false, true]) {
      expect(await urlRefusal("ftp://example.com/hook", allowPrivate)).toEqual({ reason: "invalid", message: "url must use http or https" });
      expect(await urlRefusal("not-a-url", allowPrivate)).toEqual({ reason: "invalid", message: "url must be an absolute http(s) URL" });
    }
  });

  it("refuses literal internal addresses", async () => {
    expect(await urlRefusal("http://127.0.0.1/x", false)).toEqual(forbidden("127.0.0.1"));
    expect(await urlRefusal("http://[::1]/", false)).toEqual(forbidden("::1"));
    expect(await urlRefusal("https://169.254.169.254/latest/meta-data", false)).toEqual(forbidden("169.254.169.254"));
    expect(await urlRefusal("http://10.1.2.3:8080/hook", false)).toEqual(forbidden("10.1.2.3"));
    expect(await urlRefusal("http://[::ffff:127.0.0.1]/x", false)).toEqual(forbidden("::ffff:7f00:1"));
  });

  it.each([
    ["http://[::127.0.0.1]/", "::7f00:1"],
    ["http://[::ffff:0:127.0.0.1]/", "::ffff:0:7f00:1"],
    ["http://[64:ff9b::127.0.0.1]/", "64:ff9b::7f00:1"],
    ["http://[64:ff9b:1::10.0.0.1]/", "64:ff9b:1::a00:1"],
    ["http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
    ["http://[2002:7f00:1::1]/", "2002:7f00:1::1"],
  ])("refuses %s, an IPv6 spelling that embeds or reaches an internal IPv4", async (url, host) => {
    expect(await urlRefusal(url, false)).toEqual(forbidden(host));
  });

  it("refuses a host name that resolves to loopback without saying what it resolves to", async () => {
    expect(await urlRefusal("http://localhost/x", false)).toEqual(noPublicAddress("localhost"));
    expect(await urlRefusal("http://hooks.localhost/x", false)).toEqual(noPublicAddress("hooks.localhost"));
  });

  describe("on a DNS server that knows some internal names", () => {
    let dns: DnsResponder;
    let resolver: WebhookResolver;
    beforeAll(async () => {
      dns = await startDnsResponder({
        answers: {
          "db.corp.test": { address: "10.0.0.5", ttl: 60 },
          "metadata.corp.test": { address: "169.254.169.254", ttl: 60 },
          "hooks.public.test": { address: "203.0.113.10", ttl: 60 },
        },
        silent: (name) => name === "dead.corp.test",
      });
      resolver = new WebhookResolver({ servers: [dns.server], timeoutMs: 300, cacheSize: 10, lookupsPerOrganization: 2 });
    });
    afterAll(async () => {
      resolver?.close();
      await dns?.close();
    });

    // An organization probing which internal names exist gets the same answer for each.
    it.each([
      ["db.corp.test", "resolves to a private address"],
      ["metadata.corp.test", "resolves to the cloud metadata address"],
      ["nothing.corp.test", "does not resolve"],
      ["dead.corp.test", "gets no answer at all"],
    ])("refuses %s (it %s) with the one answer for a name without a public address", async (host) => {
      expect(await urlRefusal(`https://${host}/hooks`, false, { resolver })).toEqual(noPublicAddress(host));
      expect(dns.questions(host)).toBeGreaterThan(0);
    });

    it("accepts a name with a public address", async () => {
      expect(await urlRefusal("https://hooks.public.test/hooks", false, { resolver })).toBeUndefined();
    });
  });

  it("accepts public literal addresses", async () => {
    expect(await urlRefusal("https://8.8.8.8/hook", false)).toBeUndefined();
    expect(await urlRefusal("https://[2606:4700::1111]/hook", false)).toBeUndefined();
  });

  it("lets everything http(s) through when private networks are allowed", async () => {
    for (const url of ["http://127.0.0.1/x", "http://localhost/x", "http://[::1]/", "http://192.168.0.10:3000/hook"]) {
      expect(await urlRefusal(url, true), url).toBeUndefined();
    }
  });
});

describe("guardedLookup", () => {
  const guarded = guardedLookup();
  const lookup = (hostname: string, options: object) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number }>((done) =>
      guarded(hostname, options, (error, address, family) => done({ error, address, family })),
    );

  it("refuses, at connect time, a host name resolving to an internal address, without naming the address", async () => {
    for (const options of [{}, { all: true }]) {
      const { error } = await lookup("localhost", options);
      expect(error?.code).toBe("ESSRF");
      expect(error?.message).toBe(`refused: localhost ${NOT_ALLOWED}`);
    }
  });

  it("passes a literal public address through in the form asked for", async () => {
    expect(await lookup("8.8.8.8", {})).toEqual({ error: null, address: "8.8.8.8", family: 4 });
    expect(await lookup("8.8.8.8", { all: true })).toEqual({ error: null, address: [{ address: "8.8.8.8", family: 4 }], family: undefined });
  });
});
