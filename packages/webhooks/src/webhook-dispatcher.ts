import {
  type AttemptOutcome, type AttemptRecord, type AttemptResult, type DeliveryPolicy, type DeliveryStorage, type DueDelivery, organizationShare, originShare,
  UNREADABLE_MESSAGE,
} from "@platter/domain";
import { Effect } from "effect";
import type { Agent } from "undici";
import { AttemptWriter, NO_OUTAGE_RETRY } from "./attempt-writer.ts";
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
  /**
   * Whether a failed write of results means the database is away: the writer then keeps them and
   * writes them again, within the lease (`OutageRetry`). Without it, none is.
   */
  readonly isOutage?: (error: unknown) => boolean;
}

/** Observations for metrics and logs. */
export interface DispatcherObserver {
  readonly attempted?: (outcome: AttemptOutcome, durationMs: number, delivery: DueDelivery, statusCode?: number) => void;
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

/** The claim stage's result: what to send, what to settle unsent, and whether it took every slot it asked for. */
export interface Claimed {
  /** Leased deliveries to send now. */
  readonly toSend: ReadonlyArray<DueDelivery>;
  /** Leased deliveries nothing sensible can be sent for (their message no longer reads as its type): recorded `unsendable` at once. */
  readonly unsendable: ReadonlyArray<AttemptRecord>;
  /** Deliveries left unsent under their lease: this process's keys do not open their endpoints' secrets. */
  readonly unopened: number;
  /** Whether the claim took as many as it asked for: there is more work, so freed slots are claimed again within the claim wait. */
  readonly filled: boolean;
}

/** The claim stage's decision: claim now, or sleep `ms` (unless something wakes the loop sooner). */
export type ClaimTiming = { readonly kind: "claim" } | { readonly kind: "wait"; readonly ms: number };

/** What the loop knows when it decides whether to claim (`claimTiming`). */
export interface ClaimState {
  readonly concurrency: number;
  readonly inFlight: number;
  /** Attempts that ended (were handed to the writer) since the last claim began. */
  readonly endedSinceClaim: number;
  /** Attempts that must end before the next claim: a third of the slots, or two thirds of those in flight after the last claim if fewer. */
  readonly claimAt: number;
  readonly sinceClaimMs: number;
  readonly claimWaitMs: number;
  /** New deliveries were committed since the last claim (a NOTIFY). */
  readonly newWork: boolean;
  readonly pollIntervalMs: number;
}

/**
 * When to claim. Every claim and every result write costs the database a statement, so claims come
 * in batches: once `claimAt` attempts have ended since the last (counting attempts that ended, not
 * free slots, so a dispatcher held back by caps batches its claims too), or once the claim wait has
 * passed since it (roused by the first attempt that ends after a claim that filled, by the writer's
 * batches, by new deliveries). With nothing in flight, or new deliveries and `claimAt` slots free,
 * at once. With no slot free, it waits for an attempt to end.
 */
export const claimTiming = (state: ClaimState): ClaimTiming => {
  const free = state.concurrency - state.inFlight;
  if (free <= 0) return { kind: "wait", ms: state.pollIntervalMs };
  if (state.inFlight === 0 || state.endedSinceClaim >= state.claimAt || state.sinceClaimMs >= state.claimWaitMs ||
    (state.newWork && free >= state.claimAt)) return { kind: "claim" };
  return { kind: "wait", ms: Math.max(1, state.claimWaitMs - state.sinceClaimMs) };
};

/**
 * The dispatcher loop, in three stages with typed results, as a worker of Svix's does (prepare, call,
 * handle the outcome): `claim` leases due deliveries into free slots (`Claimed`), `send` makes one
 * attempt (an `AttemptRecord`), `record` frees its slots and hands it to the `AttemptWriter`, which
 * writes results in batches. A slot frees when its result is handed over, not when its batch is
 * written (a half-open circuit's probe keeps its endpoint slot until then: the circuit is half-open
 * until its result is written); `claimTiming` says when the next claim comes.
 */
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
  /** A third of the slots: the most attempts a claim waits for (see `ClaimState.claimAt`). */
  private readonly slotsPerClaim: number;
  /**
   * Attempts that must end after a claim before the next (unless the claim wait passes first, new
   * deliveries are committed while this many slots are free, or nothing is in flight): two thirds of those in flight after the
   * last claim, at most a third of the slots. Counting attempts that ended, not free slots, a
   * dispatcher held back by caps (an endpoint's, an origin's connections, an organization's share)
   * claims in batches too, instead of once per attempt that ends.
   */
  private claimAt: number;
  /** Attempts that ended since the last claim. */
  private endedSinceClaim = 0;
  /**
   * The last claim took every slot it asked for: more is due, so the first attempt to end after it
   * wakes the loop, which claims once the claim wait has passed. After a short claim (caps hold the
   * dispatcher back), attempts that end only count towards `claimAt`.
   */
  private lastClaimFilled = false;
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
    this.slotsPerClaim = Math.max(1, Math.ceil(settings.concurrency / 3));
    this.claimAt = this.slotsPerClaim;
    // Once results are written, retries due at once can be claimed: the loop looks again.
    // While the database is away, results are kept as long as their leases may still hold.
    const outage = parts.isOutage === undefined ? NO_OUTAGE_RETRY : { isOutage: parts.isOutage, keepForMs: settings.leaseMs };
    this.writer = new AttemptWriter(store, this.policy, (e) => observer.failedLoop?.(e), () => this.rouse(), this.time, outage);
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

  /** Wakes the loop to look again (it claims only when `claimTiming` says so). */
  private rouse(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Claims nothing more, lets in-flight attempts finish, writes their results (tried once more if the database is away). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.rouse();
    await this.loop;
    await Promise.all(this.inFlight);
    await this.writer.close();
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

  /**
   * One round: claim when `claimTiming` says so, send what was claimed, record what cannot be sent.
   * Returns whether there may be more to do at once. (Attempts that end wake the loop rather than
   * the loop racing them: every `Promise.race` over the attempts in flight leaves a reaction on each,
   * a tenth of the worker's CPU at 256 in flight.)
   */
  private async tick(): Promise<boolean> {
    const sinceClaimMs = this.time.now() - this.lastClaimAt;
    const timing = claimTiming({
      concurrency: this.settings.concurrency, inFlight: this.inFlight.size, endedSinceClaim: this.endedSinceClaim, claimAt: this.claimAt,
      sinceClaimMs, claimWaitMs: claimWaitMs(this.typicalAttemptMs), newWork: this.newWork, pollIntervalMs: this.settings.pollIntervalMs,
    });
    if (timing.kind === "wait") {
      await this.sleep(timing.ms);
      return true;
    }
    const claimed = await this.claim(this.settings.concurrency - this.inFlight.size);
    for (const delivery of claimed.toSend) this.track(this.send(delivery).then((sent) => this.record(sent)));
    for (const record of claimed.unsendable) this.writer.add(record);
    if (claimed.unopened > 0) this.observer.unopened?.(claimed.unopened);
    this.claimAt = Math.max(1, Math.min(this.slotsPerClaim, Math.floor((this.inFlight.size * 2) / 3)));
    return claimed.filled;
  }

  /** The claim stage: leases up to `free` due deliveries within this dispatcher's shares. */
  private async claim(free: number): Promise<Claimed> {
    this.lastClaimAt = this.time.now();
    this.endedSinceClaim = 0;
    this.newWork = false;
    const claimed = await Effect.runPromise(this.store.claimDue(free, this.settings.leaseMs, this.policy, this.held));
    const unopened = claimed.unopened ?? 0;
    const filled = claimed.due.length + claimed.unreadable.length + unopened === free;
    this.lastClaimFilled = filled;
    const unsendable = claimed.unreadable.map((delivery): AttemptRecord => ({
      delivery, startedAt: new Date(), durationMs: 0, statusCode: undefined, responseBody: undefined, error: UNREADABLE_MESSAGE, outcome: "unsendable",
    }));
    return { toSend: claimed.due, unsendable, unopened, filled };
  }

  /** The send stage: takes the delivery's slots (this dispatcher's, its endpoint's, organization's and origin's) and makes one attempt. */
  private async send(delivery: DueDelivery): Promise<AttemptRecord> {
    count(this.held.inFlight, delivery.endpointId, 1);
    count(this.held.inFlightByOrganization, delivery.organizationId, 1);
    count(this.held.inFlightByOrigin, delivery.origin, 1);
    const result = await this.attempt(delivery);
    return { delivery, ...result };
  }

  /**
   * The record stage: frees the attempt's slots and hands its result to the writer. A half-open
   * circuit's probe keeps its endpoint slot until its result is written: until then the circuit is
   * still half-open, and a second probe must not go.
   */
  private record(sent: AttemptRecord): void {
    const { delivery } = sent;
    const releaseEndpoint = () => count(this.held.inFlight, delivery.endpointId, -1);
    if (!delivery.probe) releaseEndpoint();
    count(this.held.inFlightByOrganization, delivery.organizationId, -1);
    count(this.held.inFlightByOrigin, delivery.origin, -1);
    this.typicalAttemptMs += (sent.durationMs - this.typicalAttemptMs) / 64;
    this.observer.attempted?.(sent.outcome, sent.durationMs, delivery, sent.statusCode);
    this.writer.add(sent, delivery.probe ? releaseEndpoint : undefined);
  }

  /**
   * Counts an attempt's slot from `send` to `record`. The first attempt to end after a claim that
   * filled wakes the loop (it claims once the claim wait has passed), as does the one that reaches
   * `claimAt`: otherwise a slot freed with none free before would wait for the writer's next batch.
   */
  private track(attempt: Promise<void>): void {
    const tracked = attempt.finally(() => {
      this.countSlots();
      this.inFlight.delete(tracked);
      const ended = ++this.endedSinceClaim;
      if ((ended === 1 && this.lastClaimFilled) || ended >= this.claimAt || this.stopping) this.rouse();
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
