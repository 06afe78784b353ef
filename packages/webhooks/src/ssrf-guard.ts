import type { LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { defaultWebhookResolver, type LookupOwner, type WebhookResolver } from "./webhook-resolver.ts";

/**
 * SSRF guard: webhook URLs are chosen by customers, so by default we refuse to connect to
 * loopback, private, link-local, unique-local, CGNAT and cloud-metadata addresses. The check runs
 * on the address actually connected to (DNS rebinding-safe), and again at registration.
 */

const forbidden = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) {
  forbidden.addSubnet(network, prefix, "ipv4");
}
// No rule for ::ffff:0:0/96: BlockList already judges IPv4-mapped IPv6 addresses by the IPv4 rules
// above, and checks IPv4 addresses against IPv6 rules in mapped form, so such a rule would refuse all of IPv4.
// IPv6 ranges that are internal themselves, or embed an IPv4 address a gateway would reach for us
// (so an internal IPv4 could hide in them): all refused, whatever the IPv4 part.
for (const [network, prefix] of [
  ["::", 96], // unspecified, loopback, and the deprecated IPv4-compatible ::a.b.c.d
  ["::ffff:0:0:0", 96], // IPv4-translated (SIIT, RFC 2765)
  ["64:ff9b::", 96], // NAT64, well-known prefix (RFC 6052)
  ["64:ff9b:1::", 48], // NAT64, local-use prefix (RFC 8215)
  ["100::", 64], // discard-only
  ["2001::", 32], // Teredo: the client's IPv4 address is in the last 32 bits, obfuscated
  ["2002::", 16], // 6to4: an IPv4 address in bits 16–47
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated by RFC 3879, still routed inside some networks)
  ["ff00::", 8], // multicast
] as const) {
  forbidden.addSubnet(network, prefix, "ipv6");
}

/** Whether connecting to `address` could reach something internal rather than the public internet. */
export const isForbiddenAddress = (address: string): boolean => {
  const family = isIP(address);
  if (family === 4) return forbidden.check(address, "ipv4");
  if (family === 6) {
    // An IPv4-mapped IPv6 address is judged by its IPv4 part.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    return mapped ? forbidden.check(mapped[1]!, "ipv4") : forbidden.check(address, "ipv6");
  }
  return true;
};

/**
 * The refusal customers see: it names the host they gave, never the address it resolves to (that
 * would let them map internal networks through us).
 */
export const notAllowed = (host: string): string => `${host} is not allowed: webhooks are sent only to public internet addresses`;

/** Where a registration check resolves a host name: the process's default resolver unless given, on `owner`'s behalf. */
export interface RegistrationLookup {
  readonly resolver?: WebhookResolver;
  readonly owner?: LookupOwner;
}

/**
 * Why a URL may not receive webhooks: it is not an http(s) URL (`message`), its host is an
 * internal address written as one (`forbidden`), or its host name has no public address
 * (`no-public-address`): whether the name resolves to internal addresses only or to nothing at all
 * is one answer, so registration never tells which internal names exist.
 */
export type UrlRefusal =
  | { readonly reason: "invalid"; readonly message: string }
  | { readonly reason: "forbidden" | "no-public-address"; readonly host: string };

/** Why `url` may not receive webhooks, or `undefined` when it may (`allowPrivateNetworks` skips the address check). */
export const urlRefusal = async (
  url: string,
  allowPrivateNetworks: boolean,
  lookup: RegistrationLookup = {},
): Promise<UrlRefusal | undefined> => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { reason: "invalid", message: "url must be an absolute http(s) URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return { reason: "invalid", message: "url must use http or https" };
  if (allowPrivateNetworks) return undefined;
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  const resolver = lookup.resolver ?? defaultWebhookResolver();
  if (isIP(host) !== 0) return isForbiddenAddress(host) ? { reason: "forbidden", host } : undefined;
  const addresses = await resolver.lookup(host, lookup.owner ?? "registration").catch(() => undefined);
  // A name resolving to nothing and one resolving to an internal address are refused alike.
  if (addresses === undefined || addresses.some((a) => isForbiddenAddress(a.address))) return { reason: "no-public-address", host };
  return undefined;
};

/** The SSRF guard for sockets: an `ESSRF` error when any address of `hostname` is forbidden, else `undefined`. */
export const refuseForbidden = (hostname: string, addresses: ReadonlyArray<LookupAddress>): NodeJS.ErrnoException | undefined => {
  if (!addresses.some((a) => isForbiddenAddress(a.address))) return undefined;
  const refused: NodeJS.ErrnoException = new Error(`refused: ${notAllowed(hostname)}`);
  refused.code = "ESSRF";
  return refused;
};

/** A `lookup` for sockets, through `resolver`, that refuses forbidden addresses whichever form (single or all) is asked for. */
export const guardedLookup = (resolver: WebhookResolver = defaultWebhookResolver()) => resolver.socketLookup(refuseForbidden);
