import type { IncomingMessage } from "node:http";
import proxyAddr from "proxy-addr";

/**
 * Who sent a request: the connection's peer, unless a trusted proxy is configured (`TRUST_PROXY`),
 * and only then the address that proxy wrote into `X-Forwarded-For`. Without the setting the
 * header is ignored, so a client cannot pick the address it is counted under.
 */

/** Which proxies in front of a public port (the API, the Developer area) may tell it the client's address. */
export type TrustedProxies =
  | { readonly kind: "none" }
  /** Exactly this many proxies sit in front of every request: trust that many `X-Forwarded-For` entries from the right. */
  | { readonly kind: "hops"; readonly hops: number }
  /** Peers with these addresses or ranges (CIDR, or `loopback`, `linklocal`, `uniquelocal`) are proxies. */
  | { readonly kind: "addresses"; readonly addresses: ReadonlyArray<string> };

/** A resolver of the client address of a request under `trusted`; `proxyAddr.compile` refuses a malformed address list. */
export const clientAddressResolver = (trusted: TrustedProxies): ((request: IncomingMessage) => string) => {
  switch (trusted.kind) {
    case "none":
      return (request) => request.socket.remoteAddress ?? "";
    case "hops": {
      const trust = (_address: string, hop: number) => hop < trusted.hops;
      return (request) => proxyAddr(request, trust);
    }
    case "addresses": {
      const trust = proxyAddr.compile([...trusted.addresses]);
      return (request) => proxyAddr(request, trust);
    }
  }
};

/** Longest text kept as a counting key when an address cannot be read (a proxy passing on garbage). */
const MAX_KEY = 64;

/**
 * The key an address is counted under: an IPv4 address itself (also when written IPv4-mapped,
 * `::ffff:a.b.c.d`), an IPv6 address's /64 (what one subscriber usually holds, so cycling through
 * it gains nothing).
 */
export const addressGroup = (address: string): string => {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(":")) return address.slice(0, MAX_KEY);
  const [head = "", tail, extra] = address.split("%")[0]!.split("::");
  if (extra !== undefined) return address.slice(0, MAX_KEY);
  const groupsOf = (part: string | undefined) =>
    part === undefined || part === "" ? [] : part.split(":").flatMap((g) => (g.includes(".") ? ["0", "0"] : [g]));
  const left = groupsOf(head);
  const right = groupsOf(tail);
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  if (groups.length !== 8 || !groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return address.slice(0, MAX_KEY);
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(":")}::/64`;
};
