import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

/**
 * Failed authentications per client address, counted before anything is looked up: an address
 * that sent `quota` requests with a missing, malformed, unknown or dead credential within the
 * window (an API key, a Developer-area session cookie, a sign-in link) is refused until the window
 * ends, so guessing costs the database nothing. Counted in the process's memory
 * (rate-limiter-flexible's fixed windows); with N instances sharing the limit each allows 1/N.
 */

/** An address's refusal: how many failures it has in the window and when the window ends. */
export interface AddressRefusal {
  /** This instance's share of the limit. */
  readonly quota: number;
  readonly windowSeconds: number;
  /** The counter as rate-limiter-flexible left it (no points left, `msBeforeNext` to wait). */
  readonly res: RateLimiterRes;
  /** Seconds until the address may try again (at least 1). */
  readonly retryAfterSeconds: number;
}

/** The failed authentications of client addresses (`addressGroup`s) in one process. */
export class AddressFailures {
  private readonly limit: number;
  /** The window, in seconds. */
  readonly windowSeconds: number;
  private share: number;
  private limiter: RateLimiterMemory;

  constructor(limit: number, windowSeconds: number) {
    this.limit = limit;
    this.windowSeconds = windowSeconds;
    this.share = limit;
    this.limiter = this.makeLimiter();
  }

  /** This instance's share of the limit. */
  get quota(): number {
    return this.share;
  }

  /** How many instances share the limit now; a change starts fresh windows with the new share. */
  shareBetween(instances: number): void {
    const share = Math.max(1, Math.ceil(this.limit / instances));
    if (share === this.share) return;
    this.share = share;
    this.limiter = this.makeLimiter();
  }

  /** The refusal of `address` when it has used up its failures in this window, else `undefined`. */
  async refusal(address: string): Promise<AddressRefusal | undefined> {
    const res = await this.limiter.get(address);
    if (res === null || res.consumedPoints < this.share) return undefined;
    return {
      quota: this.share,
      windowSeconds: this.windowSeconds,
      res: new RateLimiterRes(0, res.msBeforeNext, res.consumedPoints),
      retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    };
  }

  /** Counts one failed authentication from `address`. */
  async failed(address: string): Promise<void> {
    await this.limiter.penalty(address);
  }

  private makeLimiter(): RateLimiterMemory {
    return new RateLimiterMemory({ keyPrefix: "failed-auth", points: this.share, duration: this.windowSeconds });
  }
}
