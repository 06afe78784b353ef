import { createHash } from "node:crypto";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

/**
 * Per-key rate limits (the spec leaves them open; Stripe, Svix and Tripleseat all have them).
 *
 * Each key may send `requestBurst` requests per window of `requestBurst / requestsPerSecond`
 * seconds (so on average `requestsPerSecond`, all at once if it likes), and among them `createBurst`
 * creates per window of `createBurst / createsPerSecond` seconds. Counting is in the memory of
 * each API instance (rate-limiter-flexible's fixed windows): nothing is written per request. With
 * N instances live (they announce themselves in the database every few seconds), each allows a
 * key 1/N of the limit, so across all of them a key never gets more than the limit (give or take
 * the rounding up of 1/N, and while an instance has just joined or left); a key whose traffic
 * lands on fewer instances than N gets less.
 *
 * Keys are told where they stand on every response with the IETF `RateLimit-Policy` and
 * `RateLimit` headers. Limiting happens before the key is looked up, keyed by a hash of the
 * presented key, so a flood costs the database nothing.
 */

export interface RateLimitSettings {
  readonly requestsPerSecond: number;
  readonly requestBurst: number;
  readonly createsPerSecond: number;
  readonly createBurst: number;
}

/** What the limiter decided for one request, and the headers that say so. */
export interface RateLimitDecision {
  /** Seconds to wait before trying again, when refused. */
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Readonly<Record<string, string>>;
}

interface Policy {
  readonly name: "requests" | "creates";
  readonly quota: number;
  readonly windowSeconds: number;
  readonly limiter: RateLimiterMemory;
}

const policy = (name: Policy["name"], perSecond: number, burst: number, instances: number): Policy => {
  const windowSeconds = Math.max(1, Math.round(burst / perSecond));
  const quota = Math.max(1, Math.ceil(burst / instances));
  return { name, quota, windowSeconds, limiter: new RateLimiterMemory({ keyPrefix: name, points: quota, duration: windowSeconds }) };
};

const describePolicies = (policies: ReadonlyArray<Policy>) => policies.map((p) => `"${p.name}";q=${p.quota};w=${p.windowSeconds}`).join(", ");

export class KeyRateLimits {
  private readonly settings: RateLimitSettings;
  private instances = 1;
  private requests: Policy;
  private creates: Policy;

  constructor(settings: RateLimitSettings) {
    this.settings = settings;
    [this.requests, this.creates] = this.policies();
  }

  /** How many API instances share the limits now; a change starts fresh windows with the new shares. */
  shareBetween(instances: number): void {
    if (instances === this.instances) return;
    this.instances = instances;
    [this.requests, this.creates] = this.policies();
  }

  /** Counts one request by the key `secret` (a create when `isCreate`). */
  async consume(secret: string, isCreate: boolean): Promise<RateLimitDecision> {
    const key = createHash("sha256").update(secret).digest("base64url");
    const applicable = isCreate ? [this.requests, this.creates] : [this.requests];
    const results = await Promise.all(
      applicable.map((p) => p.limiter.consume(key).then((res) => ({ p, res, ok: true }), (res: unknown) => {
        if (res instanceof RateLimiterRes) return { p, res, ok: false };
        throw res;
      })),
    );
    // The header reports the tighter of the policies that apply.
    const tightest = results.reduce((a, b) => (b.res.remainingPoints < a.res.remainingPoints ? b : a));
    const refused = results.filter((r) => !r.ok);
    const headers = {
      "ratelimit-policy": describePolicies(applicable),
      ratelimit: `"${tightest.p.name}";r=${Math.max(0, tightest.res.remainingPoints)};t=${Math.ceil(tightest.res.msBeforeNext / 1000)}`,
    };
    if (refused.length === 0) return { retryAfterSeconds: undefined, headers };
    const wait = Math.max(1, Math.ceil(Math.max(...refused.map((r) => r.res.msBeforeNext)) / 1000));
    return { retryAfterSeconds: wait, headers };
  }

  private policies(): [Policy, Policy] {
    const s = this.settings;
    return [policy("requests", s.requestsPerSecond, s.requestBurst, this.instances), policy("creates", s.createsPerSecond, s.createBurst, this.instances)];
  }
}

/** Limits no test or benchmark load reaches, for those that measure something else (the limiter still runs). */
export const UNTHROTTLED: RateLimitSettings = { requestsPerSecond: 1e9, requestBurst: 1e9, createsPerSecond: 1e9, createBurst: 1e9 };
