import {
  type AttemptOutcome, type AttemptResult, type DeliveryPolicy, type DeliveryStorage, type DueDelivery, organizationShare, originShare,
  UNREADABLE_MESSAGE,
} from "@platter/domain";
import { Effect } from "effect";
import type { Agent } from "undici";
import { AttemptWriter } from "./attempt-writer.ts";
import { type AttemptSettings, attemptDelivery, createDeliveryAgent, DEFAULT_ORIGIN_CONNECTIONS } from "./delivery-attempt.ts";
import { type DispatcherTime, realTime } from "./dispatcher-time.ts";
import { DEFAULT_DNS_SETTINGS, type DnsSettings, WebhookResolver } from "./webhook-resolver.ts";

/** The dispatcher loop: claim due deliveries fairly, attempt them with bounded concurrency, record the results. */

export interface DispatcherSettings extends AttemptSettings, DeliveryPolicy {
  /** Attempts in flight at once. */
  readonly concurrency: number;
  /** Attempts in flight per endpoint across all dispatchers (each keeps to its share, see `HeldSlots`). */
  readonly endpointConcurrency: number;
  /** Attempts in flight per organization across all dispatchers; unset, all of a dispatcher's slots but a reserve (see `organizationShare`). */
  readonly organizationConcurrency?: number | undefined;
  /** How long a claim is ours; longer than the timeout, so a live attempt is never taken over. */
  readonly leaseMs: number;
  /** Longest sleep when nothing happens (LISTEN/NOTIFY usually wakes us sooner). */
  readonly pollIntervalMs: number;
  /** How endpoints' host names are resolved: servers, timeout, cache, lookups per organization (default `DEFAULT_DNS_SETTINGS`). */
  readonly dns?: DnsSettings;
}

/** What the loop runs on besides storage: its time, and how one attempt is made (by default a signed POST through its own agent). */
export interface DispatcherParts {
  readonly time?: DispatcherTime;
  readonly attempt?: (delivery: DueDelivery) => Promise<AttemptResult>;
}

/** Observations for metrics and logs. */
export interface DispatcherObserver {
  readonly attempted?: (outcome: AttemptOutcome, durationMs: number, delivery: DueDelivery) => void;
  readonly failedLoop?: (error: unknown) => void;
  /** A claim left `count` deliveries unsent under their lease: this process's keys do not open their endpoints' secrets. */
  readonly unopened?: (count: number) => void;
}

/** The shared part of the settings, as storage applies it. */
export const deliveryPolicy = (settings: DispatcherSettings): DeliveryPolicy => ({
  circuitThreshold: settings.circuitThreshold,
  circuitCooldownMs: settings.circuitCooldownMs,
  retryScheduleMs: settings.retryScheduleMs,
  failureWindowMs: settings.failureWindowMs,
  disableNoticeMs: settings.disableNoticeMs,
  notifyOperator: settings.notifyOperator,
});

/** Adds `by` to a count of attempts in flight, forgetting a key at zero. */
const count = <Key>(counts: Map<Key, number>, key: Key, by: number): void => {
  const next = (counts.get(key) ?? 0) + by;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
};

/**
 * Longest a free slot waits for others before a claim fills what is free: CLAIM_WAIT_MS, or a
 * thirty-second of how long attempts take (their moving average) if less, so slots freed by attempts of
 * a few hundred milliseconds are not left idle for a tenth of their cycle.
 */
const CLAIM_WAIT_MS = 50;
const claimWaitMs = (typicalAttemptMs: number) => Math.max(1, Math.min(CLAIM_WAIT_MS, typicalAttemptMs / 32));

export class WebhookDispatcher {
  private readonly store: DeliveryStorage;
  private readonly settings: DispatcherSettings;
  private readonly policy: DeliveryPolicy;
  private readonly observer: DispatcherObserver;
  private readonly agent: Agent;
  private readonly resolver: WebhookResolver;
  private readonly writer: AttemptWriter;
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts in flight per endpoint, and this dispatcher's share of each endpoint's cap. */
  private readonly held: {
    share: number;
    readonly inFlight: Map<number, number>;
    organizationShare: number;
    readonly inFlightByOrganization: Map<number, number>;
    readonly originConnections: number;
    readonly inFlightByOrigin: Map<string, number>;
    readonly originShare: number;
  };
  private readonly minimumClaim: number;
  /**
   * Attempts that must end after a claim before the next (unless `claimWaitMs` passes first, new
   * deliveries are committed while this many slots are free, or nothing is in flight): two thirds of those in flight after the
   * last claim, at most two thirds of the slots. Counting attempts that ended, not free slots, a
   * dispatcher held back by caps (an endpoint's, an origin's connections, an organization's share)
   * claims in batches too, instead of once per attempt that ends.
   */
  private claimAt: number;
  /** Attempts that ended since the last claim. */
  private endedSinceClaim = 0;
  /** Deliveries were committed since the last claim (`wake`): claim at once if `claimAt` slots are free. */
  private newWork = false;
  private lastClaimAt = 0;
  /** Moving average of attempt durations, for `claimWaitMs`. */
  private typicalAttemptMs = CLAIM_WAIT_MS * 16;
  /** Milliseconds of slots in use (attempts in flight × time), up to `slotsCountedAt`. */
  private slotMs = 0;
  private slotsCountedAt: number;
  private stopping = false;
  private wakeUp: (() => void) | undefined;
  /** A wake that arrived while the loop was busy: the next sleep returns at once. */
  private woken = false;
  private loop: Promise<void> | undefined;
  private readonly time: DispatcherTime;
  private readonly attempt: (delivery: DueDelivery) => Promise<AttemptResult>;

  constructor(store: DeliveryStorage, settings: DispatcherSettings, observer: DispatcherObserver = {}, parts: DispatcherParts = {}) {
    this.store = store;
    this.time = parts.time ?? realTime;
    this.slotsCountedAt = this.time.now();
    this.settings = settings;
    this.policy = deliveryPolicy(settings);
    this.held = {
      share: settings.endpointConcurrency,
      inFlight: new Map(),
      organizationShare: organizationShare(settings, 1),
      inFlightByOrganization: new Map(),
      originConnections: settings.originConnections ?? DEFAULT_ORIGIN_CONNECTIONS,
      inFlightByOrigin: new Map(),
      originShare: originShare(settings.originConnections ?? DEFAULT_ORIGIN_CONNECTIONS),
    };
    this.observer = observer;
    const dns = settings.dns ?? { ...DEFAULT_DNS_SETTINGS, timeoutMs: Math.min(DEFAULT_DNS_SETTINGS.timeoutMs, settings.timeoutMs) };
    this.resolver = new WebhookResolver(dns);
    this.agent = createDeliveryAgent(settings, this.resolver);
    this.minimumClaim = Math.max(1, Math.floor((settings.concurrency * 2) / 3));
    this.claimAt = this.minimumClaim;
    // Once results are written, retries due at once can be claimed: the loop looks again.
    this.writer = new AttemptWriter(store, this.policy, (e) => observer.failedLoop?.(e), () => this.rouse(), this.time);
    this.attempt = parts.attempt ?? ((delivery) => attemptDelivery(this.agent, delivery, this.settings, this.resolver));
  }

  /**
   * Seconds of slots in use since the start (attempts in flight × time): over a window, its increase
   * divided by the window and DISPATCHER_CONCURRENCY is the share of the slots kept busy.
   */
  get slotSeconds(): number {
    this.countSlots();
    return this.slotMs / 1000;
  }

  private countSlots(): void {
    const now = this.time.now();
    this.slotMs += this.inFlight.size * (now - this.slotsCountedAt);
    this.slotsCountedAt = now;
  }

  /** Starts the loop in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  /** New deliveries were committed (a NOTIFY arrived): the loop claims at once if `claimAt` slots are free. */
  wake(): void {
    this.newWork = true;
    this.rouse();
  }

  /** Wakes the loop to look again (it claims only when `tick` says it is time). */
  private rouse(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Claims nothing more, lets in-flight attempts finish, writes their results. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.rouse();
    await this.loop;
    await Promise.all(this.inFlight);
    await this.writer.flush();
    await this.agent.close();
  }

  /**
   * How many dispatchers are live: each keeps to its share of every endpoint's cap (rounded up),
   * so together they stay within it without asking each other.
   */
  shareBetween(dispatchers: number): void {
    this.held.share = Math.max(1, Math.ceil(this.settings.endpointConcurrency / Math.max(1, dispatchers)));
    this.held.organizationShare = organizationShare(this.settings, dispatchers);
  }

  /** Attempts currently running. */
  get activeAttempts(): number {
    return this.inFlight.size;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        const worked = await this.tick();
        if (!worked) await this.sleep(await this.idleDelay());
      } catch (error) {
        this.observer.failedLoop?.(error);
        await this.sleep(1000);
      }
    }
  }

  /** One round: fill free slots. Returns whether there may be more to do at once. */
  private async tick(): Promise<boolean> {
    const free = this.settings.concurrency - this.inFlight.size;
    // Claim in batches: every claim and every result write costs the database a statement, so
    // fewer, larger ones cost less per delivery (bench:webhooks: 433 → 288 µs of CPU per delivery,
    // worker and PostgreSQL, going from a quarter of the slots to two thirds with the writer's larger
    // batches). A claim waits until `claimAt` attempts have ended since the last, or CLAIM_WAIT_MS
    // since it, so slots held by slow endpoints never hold back the others for longer than that;
    // with nothing in flight, or new deliveries and `claimAt` slots free (a dispatcher held back by
    // caps), it claims at once. An attempt that ends with `claimAt` reached wakes the loop. (Not `Promise.race(inFlight)`: every race leaves a reaction on each attempt
    // still running, a tenth of the worker's CPU at 256 in flight.)
    const sinceClaim = this.time.now() - this.lastClaimAt;
    const wait = claimWaitMs(this.typicalAttemptMs);
    const ready = this.inFlight.size === 0 || this.endedSinceClaim >= this.claimAt || sinceClaim >= wait ||
      (this.newWork && free >= this.claimAt);
    if (free === 0 || !ready) {
      await this.sleep(free === 0 ? this.settings.pollIntervalMs : Math.max(1, wait - sinceClaim));
      return true;
    }
    this.lastClaimAt = this.time.now();
    this.endedSinceClaim = 0;
    this.newWork = false;
    const claimed = await Effect.runPromise(this.store.claimDue(free, this.settings.leaseMs, this.policy, this.held));
    for (const delivery of claimed.due) this.launch(delivery);
    if ((claimed.unopened ?? 0) > 0) this.observer.unopened?.(claimed.unopened ?? 0);
    this.claimAt = Math.max(1, Math.min(this.minimumClaim, Math.floor((this.inFlight.size * 2) / 3)));
    for (const delivery of claimed.unreadable) {
      const result = { startedAt: new Date(), durationMs: 0, statusCode: undefined, responseBody: undefined } as const;
      this.writer.add({ delivery, ...result, error: UNREADABLE_MESSAGE, outcome: "unsendable" });
    }
    return claimed.due.length + claimed.unreadable.length + (claimed.unopened ?? 0) === free;
  }

  private launch(delivery: DueDelivery): void {
    const endpoint = delivery.endpointId;
    const organization = delivery.organizationId;
    count(this.held.inFlight, endpoint, 1);
    count(this.held.inFlightByOrganization, organization, 1);
    count(this.held.inFlightByOrigin, delivery.origin, 1);
    const running = this.attempt(delivery).then((result) => {
      // A half-open circuit's probe keeps its endpoint slot until its result is written: until then the circuit is still half-open.
      const releaseEndpoint = () => count(this.held.inFlight, endpoint, -1);
      if (!delivery.probe) releaseEndpoint();
      count(this.held.inFlightByOrganization, organization, -1);
      count(this.held.inFlightByOrigin, delivery.origin, -1);
      this.typicalAttemptMs += (result.durationMs - this.typicalAttemptMs) / 64;
      this.observer.attempted?.(result.outcome, result.durationMs, delivery);
      this.writer.add({ delivery, ...result }, delivery.probe ? releaseEndpoint : undefined);
    });
    const tracked = running.finally(() => {
      this.countSlots();
      this.inFlight.delete(tracked);
      // Fewer ended than a claim waits for: the loop's own timer comes back for them.
      if (++this.endedSinceClaim >= this.claimAt || this.stopping) this.rouse();
    });
    this.countSlots();
    this.inFlight.add(tracked);
  }

  private async idleDelay(): Promise<number> {
    // An attempt that ends wakes the loop: only an idle dispatcher needs to know when the next is due.
    if (this.inFlight.size > 0) return this.settings.pollIntervalMs;
    const due = await Effect.runPromise(this.store.nextDueInMs(this.policy));
    return Math.min(this.settings.pollIntervalMs, due ?? Number.POSITIVE_INFINITY);
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((done) => {
      const finish = () => {
        cancel();
        this.woken = false;
        this.wakeUp = undefined;
        done();
      };
      const cancel = this.time.after(ms, finish);
      this.wakeUp = finish;
    });
  }
}
