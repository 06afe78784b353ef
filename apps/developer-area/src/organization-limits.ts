import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { DeveloperAreaLimits } from "./config.ts";
import { TooManyActions } from "./page-errors.ts";

/**
 * Per-organization limits on the Developer area's costly actions: test events and replays make
 * the dispatcher send, and every endpoint added is one more delivery per message. Each
 * organization may take `DeveloperAreaLimits` of each per window (rate-limiter-flexible's fixed
 * windows, as the API's key limits), counted in this process's memory: nothing is written per
 * action. An action is counted once its form is valid, just before it is done, so a refusal does
 * nothing (and audits nothing).
 */

/** The actions that are limited. */
export type LimitedAction = "testEvents" | "endpointCreates" | "replays";

const WHAT: Readonly<Record<LimitedAction, string>> = { testEvents: "test events", endpointCreates: "new endpoints", replays: "replays" };

/** The per-organization limiters of one Developer-area process. */
export class OrganizationLimits {
  private readonly limiters: Readonly<Record<LimitedAction, RateLimiterMemory>>;
  private readonly limits: DeveloperAreaLimits;

  constructor(limits: DeveloperAreaLimits) {
    this.limits = limits;
    const limiter = (action: LimitedAction) =>
      new RateLimiterMemory({ keyPrefix: action, points: limits[action], duration: Math.max(1, Math.round(limits.windowMs / 1000)) });
    this.limiters = { testEvents: limiter("testEvents"), endpointCreates: limiter("endpointCreates"), replays: limiter("replays") };
  }

  /** Counts one `action` of organization `organizationId`; `TooManyActions` (nothing counted against later windows) when over its limit. */
  async consume(organizationId: number, action: LimitedAction, back: string): Promise<void> {
    try {
      await this.limiters[action].consume(String(organizationId));
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      throw new TooManyActions({
        what: WHAT[action],
        allowed: this.limits[action],
        windowMs: this.limits.windowMs,
        retryAfterSeconds: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)),
        back,
      });
    }
  }
}
