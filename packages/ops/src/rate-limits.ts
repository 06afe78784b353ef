import { hashApiKey } from "@platter/domain";
import { AddressFailures } from "./address-failures.ts";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

/**
 * Rate limits (the spec leaves them open; Stripe, Svix and Tripleseat all have them), three kinds:
 *
 * - **per organization** (`requests`, and `creates` on a POST): the documented limits, shared by
 *   all of the organization's keys, counted right after the key is looked up;
 * - **per key** (`key`): each key's own limit, at most the organization's, counted before the key
 *   is looked up (keyed by a hash of the presented key), so one key's flood costs the database
 *   nothing;
 * - **failed authentications per client address**: an address that sent `authFailures` requests
 *   with a missing, malformed, unknown or revoked key within the window gets 429 before any key
 *   it sends is looked up, until the window ends; a key this instance saw authenticate recently
 *   still gets through (a shared NAT's good clients are not locked out by its bad one).
 *
 * Requests may use all of a window's quota at once: `burst` requests per window of
 * `burst / perSecond` seconds. Counting is in the memory of each API instance
 * (rate-limiter-flexible's fixed windows): nothing is written per request. With N instances live
 * (they announce themselves in the database every few seconds), each allows 1/N of every limit,
 * so across all of them nobody gets more than the limit (give or take the rounding up of 1/N, and
 * while an instance has just joined or left); traffic that lands on fewer instances than N gets
 * less.
 *
 * Callers are told where they stand with the IETF `RateLimit-Policy` and `RateLimit` headers.
 */

export interface RateLimitSettings {
  /** An organization's requests per second on average (all its keys together). */
  readonly requestsPerSecond: number;
  /** An organization's requests at once (per window of burst ÷ rate seconds). */
  readonly requestBurst: number;
  /** An organization's creates per second on average, counted on top of its requests. */
  readonly createsPerSecond: number;
  /** An organization's creates at once. */
  readonly createBurst: number;
  /** One key's own requests per second on average (at most the organization's). */
  readonly keyRequestsPerSecond: number;
  /** One key's own requests at once (at most the organization's). */
  readonly keyRequestBurst: number;
  /** Failed authentications one client address may cause per window before it is refused. */
  readonly authFailures: number;
  /** The window of `authFailures`, in seconds. */
  readonly authFailureWindowSeconds: number;
}

/** Which limit refused a request: the key's own, its organization's, or the client address's failed authentications. */
export type LimitedBy = "key" | "organization" | "address";

/** What the limiter decided for one request, and the headers that say so. */
export interface RateLimitDecision {
  /** When refused: the limit that refused it, and the seconds to wait before trying again. */
  readonly refused: { readonly limitedBy: LimitedBy; readonly retryAfterSeconds: number } | undefined;
  readonly headers: Readonly<Record<string, string>>;
}

type PolicyName = "requests" | "creates" | "key" | "failed-auth";

interface Policy {
  readonly name: PolicyName;
  readonly quota: number;
  readonly windowSeconds: number;
  readonly limiter: RateLimiterMemory;
}

/** One policy's count for one request (the failed authentications' policy has its limiter in `AddressFailures`). */
export interface Counted {
  readonly policy: Pick<Policy, "name" | "quota" | "windowSeconds">;
  readonly res: RateLimiterRes;
  readonly ok: boolean;
}

const LIMITED_BY: Readonly<Record<PolicyName, LimitedBy>> = {
  requests: "organization", creates: "organization", key: "key", "failed-auth": "address",
};

const policy = (name: PolicyName, quota: number, windowSeconds: number, instances: number): Policy => {
  const share = Math.max(1, Math.ceil(quota / instances));
  return { name, quota: share, windowSeconds, limiter: new RateLimiterMemory({ keyPrefix: name, points: share, duration: windowSeconds }) };
};

const rated = (name: PolicyName, perSecond: number, burst: number, instances: number): Policy =>
  policy(name, burst, Math.max(1, Math.round(burst / perSecond)), instances);

const count = (p: Policy, key: string): Promise<Counted> =>
  p.limiter.consume(key).then((res) => ({ policy: p, res, ok: true }), (res: unknown) => {
    if (res instanceof RateLimiterRes) return { policy: p, res, ok: false };
    throw res;
  });

/** The headers and verdict for the policies counted for one request (the tightest is reported). */
const decide = (counted: ReadonlyArray<Counted>): RateLimitDecision => {
  const tightest = counted.reduce((a, b) => (b.res.remainingPoints < a.res.remainingPoints ? b : a));
  const refused = counted.filter((c) => !c.ok);
  const reported = refused.length > 0 ? refused.reduce((a, b) => (b.res.msBeforeNext > a.res.msBeforeNext ? b : a)) : tightest;
  const headers = {
    "ratelimit-policy": counted.map(({ policy: p }) => `"${p.name}";q=${p.quota};w=${p.windowSeconds}`).join(", "),
    ratelimit: `"${reported.policy.name}";r=${Math.max(0, reported.res.remainingPoints)};t=${Math.ceil(reported.res.msBeforeNext / 1000)}`,
  };
  if (refused.length === 0) return { refused: undefined, headers };
  return {
    refused: { limitedBy: LIMITED_BY[reported.policy.name], retryAfterSeconds: Math.max(1, Math.ceil(reported.res.msBeforeNext / 1000)) },
    headers,
  };
};

/** How many recently authenticated keys (their hashes) each instance remembers, to let them past an address's lock. */
const KNOWN_KEYS = 10_000;

/** The rate limits of one API instance: per organization, per key, and failed authentications per client address. */
export class KeyRateLimits {
  private readonly settings: RateLimitSettings;
  private instances = 1;
  private requests!: Policy;
  private creates!: Policy;
  private key!: Policy;
  private readonly failures: AddressFailures;
  /** Hashes of keys that authenticated here lately, oldest first. */
  private readonly known = new Map<string, true>();

  /** `failures` counts failed authentications per address; one may be shared with other sign-ins of the process (the Developer area's sessions and links). */
  constructor(settings: RateLimitSettings, failures = new AddressFailures(settings.authFailures, settings.authFailureWindowSeconds)) {
    this.settings = settings;
    this.failures = failures;
    this.makePolicies();
  }

  /** How many API instances share the limits now; a change starts fresh windows with the new shares. */
  shareBetween(instances: number): void {
    if (instances === this.instances) return;
    this.instances = instances;
    this.makePolicies();
  }

  /**
   * The key's stand-in for every count and memory: a hash, never the secret itself; the same hash
   * the key is looked up by (`ApiKeyRepository.authenticateHash`), so a request hashes its key once.
   */
  hashOf(secret: string): string {
    return hashApiKey(secret);
  }

  /**
   * Refuses a client address that has used up its failed authentications (before any lookup);
   * `keyHash` lets a key that authenticated here lately through anyway.
   */
  async checkAddress(address: string, keyHash: string | undefined): Promise<RateLimitDecision | undefined> {
    if (keyHash !== undefined && this.known.has(keyHash)) return undefined;
    const refused = await this.failures.refusal(address);
    if (refused === undefined) return undefined;
    return decide([{ policy: { name: "failed-auth", quota: refused.quota, windowSeconds: refused.windowSeconds }, res: refused.res, ok: false }]);
  }

  /** Counts one failed authentication from `address` (and forgets `keyHash` as a good key). */
  async failedAuthentication(address: string, keyHash: string | undefined): Promise<void> {
    if (keyHash !== undefined) this.known.delete(keyHash);
    await this.failures.failed(address);
  }

  /** Counts one request against the presented key's own limit, before the key is looked up. */
  countKey(keyHash: string): Promise<Counted> {
    return count(this.key, keyHash);
  }

  /** Whether the key's own count refused the request: its decision, else `undefined`. */
  keyRefusal(key: Counted): RateLimitDecision | undefined {
    return key.ok ? undefined : decide([key]);
  }

  /**
   * Remembers the key as good, then counts the request (a create when `isCreate`) against its
   * organization's limits; the decision reports the key's count too.
   */
  async countOrganization(keyHash: string, key: Counted, organizationId: number, isCreate: boolean): Promise<RateLimitDecision> {
    this.known.delete(keyHash);
    this.known.set(keyHash, true);
    if (this.known.size > KNOWN_KEYS) this.known.delete(this.known.keys().next().value!);
    const organization = String(organizationId);
    const counted = await Promise.all(isCreate ? [count(this.requests, organization), count(this.creates, organization)] : [count(this.requests, organization)]);
    return decide([...counted, key]);
  }

  private makePolicies(): void {
    const s = this.settings;
    const n = this.instances;
    this.requests = rated("requests", s.requestsPerSecond, s.requestBurst, n);
    this.creates = rated("creates", s.createsPerSecond, s.createBurst, n);
    this.key = rated("key", s.keyRequestsPerSecond, s.keyRequestBurst, n);
    this.failures.shareBetween(n);
  }
}

/** Limits no test or benchmark load reaches, for those that measure something else (the limiter still runs). */
export const UNTHROTTLED: RateLimitSettings = {
  requestsPerSecond: 1e9, requestBurst: 1e9, createsPerSecond: 1e9, createBurst: 1e9, keyRequestsPerSecond: 1e9, keyRequestBurst: 1e9,
  authFailures: 1e9, authFailureWindowSeconds: 1,
};
