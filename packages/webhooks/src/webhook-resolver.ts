import { promises as dns, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { LRUCache } from "lru-cache";

/**
 * DNS for webhook endpoints, which customers choose (some hostile): c-ares queries on the event
 * loop (never libuv's four shared threads, which `dns.lookup` occupies for as long as a dead DNS
 * server keeps it waiting), one deadline per lookup, a bounded cache that keeps each answer for its
 * TTL, and at most a few lookups in flight per organization, so one organization's dead DNS
 * delays nobody else's deliveries or the database pool's connections.
 */

/** How webhook host names are resolved. */
export interface DnsSettings {
  /** DNS servers (`1.1.1.1`, `127.0.0.1:5353`, `[2606:4700::1111]:53`); `undefined`: the system's (resolv.conf). */
  readonly servers: ReadonlyArray<string> | undefined;
  /** Longest a lookup may take, waiting for its organization's turn included. */
  readonly timeoutMs: number;
  /** Host names whose answers are kept at most (least recently used go first). */
  readonly cacheSize: number;
  /** Lookups one organization may have in flight; more wait their turn, within the timeout. */
  readonly lookupsPerOrganization: number;
}

/** The defaults: the system's servers, 5 s, 10,000 names, 4 lookups per organization. */
export const DEFAULT_DNS_SETTINGS: DnsSettings = { servers: undefined, timeoutMs: 5_000, cacheSize: 10_000, lookupsPerOrganization: 4 };

/** Whose lookup it is: an organization id, or a name for lookups made on no organization's behalf. */
export type LookupOwner = number | string;

/** Answers are kept at least this long (a TTL of 0 would make the connection right after the check ask again). */
const MIN_TTL_MS = 1_000;
/** …and at most this long, whatever their TTL says. */
const MAX_TTL_MS = 10 * 60_000;
/** A socket's lookup may still use an answer this long past its TTL: it connects right after its attempt's lookup. */
const CONNECT_GRACE_MS = 5_000;
/** The owner of socket lookups that find nothing cached (an agent used without its attempt's lookup). */
const CONNECTIONS: LookupOwner = "connections";

interface Answer {
  readonly addresses: ReadonlyArray<LookupAddress>;
  readonly expiresAt: number;
}

/** A failed lookup, with the code sockets and attempts report (`ETIMEOUT`, `ENOTFOUND`). */
export class DnsLookupError extends Error {
  readonly code: string;
  readonly hostname: string;
  constructor(code: string, hostname: string, message: string) {
    super(message);
    this.code = code;
    this.hostname = hostname;
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Names answered without DNS: `localhost` and `*.localhost` are loopback (RFC 6761); c-ares reads no hosts file. */
const LOOPBACK: ReadonlyArray<LookupAddress> = [{ address: "127.0.0.1", family: 4 }, { address: "::1", family: 6 }];
const isLocalhost = (host: string) => host === "localhost" || host.endsWith(".localhost");

/** Waiting for one of an owner's few lookup slots, bounded by the lookup's deadline. */
class LookupSlots {
  private readonly limit: number;
  private readonly byOwner = new Map<LookupOwner, { active: number; readonly waiting: Array<() => void> }>();

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Resolves with a release once the owner has a free slot; `false` if `deadline` comes first. */
  acquire(owner: LookupOwner, deadline: Promise<void>): Promise<(() => void) | false> {
    let state = this.byOwner.get(owner);
    if (state === undefined) {
      state = { active: 0, waiting: [] };
      this.byOwner.set(owner, state);
    }
    const slots = state;
    const release = () => {
      const next = slots.waiting.shift();
      if (next !== undefined) return next();
      slots.active--;
      if (slots.active === 0) this.byOwner.delete(owner);
    };
    if (slots.active < this.limit) {
      slots.active++;
      return Promise.resolve(release);
    }
    return new Promise((granted) => {
      const turn = () => granted(release);
      slots.waiting.push(turn);
      void deadline.then(() => {
        const at = slots.waiting.indexOf(turn);
        if (at === -1) return; // the slot came first
        slots.waiting.splice(at, 1);
        granted(false);
      });
    });
  }
}

/** Resolves webhook host names without occupying libuv's thread pool; see the module comment. */
export class WebhookResolver {
  private readonly settings: DnsSettings;
  private readonly resolver: dns.Resolver;
  private readonly cache: LRUCache<string, Answer>;
  private readonly slots: LookupSlots;
  /** Queries under way, by host name: lookups of the same name wait on one query. */
  private readonly pending = new Map<string, Promise<Answer>>();

  constructor(settings: DnsSettings = DEFAULT_DNS_SETTINGS) {
    this.settings = settings;
    // Three tries' worth of c-ares timeouts (it doubles the second) fit in the lookup's deadline.
    this.resolver = new dns.Resolver({ timeout: Math.max(50, Math.floor(settings.timeoutMs / 3)), tries: 2 });
    if (settings.servers !== undefined) this.resolver.setServers([...settings.servers]);
    this.cache = new LRUCache({ max: settings.cacheSize, ttlAutopurge: false });
    this.slots = new LookupSlots(settings.lookupsPerOrganization);
  }

  /**
   * The addresses of `host` (IPv4 first), on `owner`'s behalf. Rejects with a `DnsLookupError`:
   * `ETIMEOUT` past the deadline, `ENOTFOUND` when the name has no address.
   */
  async lookup(host: string, owner: LookupOwner): Promise<ReadonlyArray<LookupAddress>> {
    const name = host.toLowerCase().replace(/\.$/, "");
    const literal = isIP(name);
    if (literal !== 0) return [{ address: name, family: literal }];
    if (isLocalhost(name)) return LOOPBACK;
    const cached = this.fresh(name, 0);
    if (cached !== undefined) return cached;
    const { deadline, cancel } = this.deadline();
    try {
      const release = await this.slots.acquire(owner, deadline);
      if (release === false) throw this.timedOut(name);
      try {
        // Another lookup may have answered while this one waited its turn.
        const answered = this.fresh(name, 0);
        if (answered !== undefined) return answered;
        const timedOut = deadline.then(() => Promise.reject(this.timedOut(name)));
        return (await Promise.race([this.query(name), timedOut])).addresses;
      } finally {
        release();
      }
    } finally {
      cancel();
    }
  }

  /**
   * A `lookup` for sockets: the answer its attempt's lookup just cached (a little past its TTL
   * too), otherwise a lookup of its own. `check` may refuse the addresses (the SSRF guard).
   */
  socketLookup(check: (hostname: string, addresses: ReadonlyArray<LookupAddress>) => NodeJS.ErrnoException | undefined = () => undefined) {
    return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
      const name = hostname.toLowerCase().replace(/\.$/, "");
      const cached = isIP(name) === 0 && !isLocalhost(name) ? this.fresh(name, CONNECT_GRACE_MS) : undefined;
      const found = cached === undefined ? this.lookup(name, CONNECTIONS) : Promise.resolve(cached);
      found.then(
        (addresses) => {
          const family = options.family === 6 || options.family === "IPv6" ? 6 : options.family === 4 || options.family === "IPv4" ? 4 : 0;
          const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
          if (usable.length === 0) return callback(new DnsLookupError("ENOTFOUND", name, `DNS lookup of ${name} found no IPv${family} address`), []);
          const refused = check(name, usable);
          if (refused !== undefined) return callback(refused, []);
          if (options.all) return callback(null, [...usable]);
          callback(null, usable[0]!.address, usable[0]!.family);
        },
        (error: NodeJS.ErrnoException) => callback(error, []),
      );
    };
  }

  /** Cancels the queries under way: their lookups fail at once (`ECANCELLED`). */
  close(): void {
    this.resolver.cancel();
  }

  /** The cached addresses of `name` if its answer expires no earlier than `graceMs` ago. */
  private fresh(name: string, graceMs: number): ReadonlyArray<LookupAddress> | undefined {
    const answer = this.cache.get(name);
    return answer !== undefined && answer.expiresAt + graceMs > Date.now() ? answer.addresses : undefined;
  }

  /** A promise that resolves when the lookup's time is up, unless cancelled first. */
  private deadline(): { deadline: Promise<void>; cancel: () => void } {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((done) => (timer = setTimeout(done, this.settings.timeoutMs)));
    return { deadline, cancel: () => clearTimeout(timer) };
  }

  private timedOut(name: string): DnsLookupError {
    return new DnsLookupError("ETIMEOUT", name, `DNS lookup of ${name} timed out after ${this.settings.timeoutMs} ms`);
  }

  /** One A and one AAAA query for `name`, shared by every lookup of it meanwhile; the answer is cached. */
  private query(name: string): Promise<Answer> {
    const under = this.pending.get(name);
    if (under !== undefined) return under;
    const query = Promise.allSettled([this.resolver.resolve4(name, { ttl: true }), this.resolver.resolve6(name, { ttl: true })])
      .then(([v4, v6]) => {
        const records = [
          ...(v4.status === "fulfilled" ? v4.value.map((r) => ({ address: r.address, family: 4, ttl: r.ttl })) : []),
          ...(v6.status === "fulfilled" ? v6.value.map((r) => ({ address: r.address, family: 6, ttl: r.ttl })) : []),
        ];
        if (records.length === 0) {
          const codes = [v4, v6].map((r) => (r.status === "rejected" ? (r.reason as NodeJS.ErrnoException).code : "ENODATA"));
          if (codes.every((code) => code === "ENODATA" || code === "ENOTFOUND")) {
            throw new DnsLookupError("ENOTFOUND", name, `DNS lookup of ${name} found no address`);
          }
          if (codes.includes("ETIMEOUT")) throw this.timedOut(name);
          throw new DnsLookupError(codes.find((c) => c !== "ENODATA" && c !== "ENOTFOUND") ?? "ESERVFAIL", name, `DNS lookup of ${name} failed`);
        }
        const ttlMs = Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, Math.min(...records.map((r) => r.ttl)) * 1000));
        const answer: Answer = { addresses: records.map(({ address, family }) => ({ address, family })), expiresAt: Date.now() + ttlMs };
        // Kept past its TTL by the sockets' grace only; `fresh` tells the two apart.
        this.cache.set(name, answer, { ttl: ttlMs + CONNECT_GRACE_MS });
        return answer;
      })
      .finally(() => this.pending.delete(name));
    this.pending.set(name, query);
    return query;
  }
}

let shared: WebhookResolver | undefined;

/** One resolver with the default settings for the process (registration checks in the CLI and the Developer area). */
export const defaultWebhookResolver = (): WebhookResolver => (shared ??= new WebhookResolver(DEFAULT_DNS_SETTINGS));
