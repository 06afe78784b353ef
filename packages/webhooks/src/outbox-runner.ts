import { type DispatcherTime, realTime } from "./dispatcher-time.ts";

/**
 * The one runner of the dispatcher's outboxes of stored notices (the alert e-mails, the operator's
 * operational webhooks): each turn it prepares its channel's items, claims due ones under the one
 * lease (organizations taking turns, in the channel's claim statement), sends them through the
 * channel's sender, and records each outcome (done, failed, or due again after its backoff). It
 * turns again at once while a turn claimed anything; otherwise it sleeps until woken (a NOTIFY on
 * `platter_notices`), the channel's next retry is due, or its fallback poll comes round.
 *
 * Bounded by construction: a turn claims at most the channel's batch and organizations take turns in
 * each claim, so one organization's burst delays another's item by at most the turn in progress and
 * the next; and wake-ups are coalesced: any number of them during a turn, or within `gatherMs` of
 * its start, make one more turn, not one each.
 */

/** One outbox as the runner uses it: how its items are found, sent and recorded. */
export interface OutboxChannel<Item, Sent> {
  /** Work before each claim (the mails of new notices written, a stopped sender's mails given up); optional. */
  readonly prepare?: () => Promise<void>;
  /** Claims due items under the one lease, at most the channel's batch, organizations taking turns. */
  readonly claim: () => Promise<ReadonlyArray<Item>>;
  /** Sends a turn's items through the channel's sender, all at once; never rejects for one item's failure (it is that item's outcome). */
  readonly send: (items: ReadonlyArray<Item>) => Promise<ReadonlyArray<Sent>>;
  /** Records what came of each item, by its lease holder only: done, failed for good, or due again after its backoff. */
  readonly record: (sent: ReadonlyArray<Sent>) => Promise<void>;
  /** Milliseconds until its next item is due, when it knows (a retry): the runner sleeps no longer than that. */
  readonly nextDueInMs?: () => Promise<number | undefined>;
  /** Closes its sender once the runner has stopped. */
  readonly close?: () => Promise<void> | void;
}

/** How a runner turns. */
export interface OutboxRunnerOptions {
  /** Longest sleep when nothing wakes it (its fallback poll: retries and a stopped holder's items are found within it). */
  readonly pollIntervalMs: number;
  /** How long a claimed item is held: outcomes the database could not take (an outage) are written again within it. */
  readonly leaseMs: number;
  /** Least time from a turn's start to the next turn a wake-up starts, so the NOTIFYs of a burst make one turn (default `WAKE_GATHER_MS`). */
  readonly gatherMs?: number;
  /** Whether a failed write of outcomes means the database is away (then written again every second within the lease). */
  readonly isOutage?: (error: unknown) => boolean;
  readonly time?: DispatcherTime;
}

/** What a runner tells its process. */
export interface OutboxRunnerObserver {
  /** A turn failed (a statement, or outcomes not written within the lease); the next turn tries again. */
  readonly failedTurn?: (error: unknown) => void;
}

/** Default least time between a turn's start and a turn started by a wake-up. */
export const WAKE_GATHER_MS = 50;
/**
 * Least idle sleep after a turn that claimed nothing, whatever the channel says is due: an item due now
 * that the claim passes over (its organization already has its share in flight) would otherwise turn
 * the runner in a tight loop of statements until the items in flight settle.
 */
export const IDLE_FLOOR_MS = 500;
/** How long after a failed write of outcomes (an outage) it is tried again. */
const OUTCOME_RETRY_MS = 1000;

/** One loop over one outbox channel (see the file's comment); a dispatcher runs one per channel, so a slow sender holds back only its own. */
export class OutboxRunner<Item, Sent> {
  private readonly channel: OutboxChannel<Item, Sent>;
  private readonly options: OutboxRunnerOptions;
  private readonly observer: OutboxRunnerObserver;
  private readonly time: DispatcherTime;
  private stopping = false;
  private loop: Promise<void> | undefined;
  /** A wake-up since the current turn started: one more turn follows it. */
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private turnCount = 0;

  constructor(channel: OutboxChannel<Item, Sent>, options: OutboxRunnerOptions, observer: OutboxRunnerObserver = {}) {
    this.channel = channel;
    this.options = options;
    this.observer = observer;
    this.time = options.time ?? realTime;
  }

  /** Turns taken so far (each one prepare, claim, send and record). */
  get turns(): number {
    return this.turnCount;
  }

  /** Starts the loop in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  /** New items may be due (a NOTIFY arrived): one more turn soon, however many wake-ups come meanwhile. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops after the turn in progress (its outcomes recorded), then closes the channel's sender. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp?.();
    await this.loop;
    await this.channel.close?.();
  }

  /** One turn: prepare, claim, send, record. Returns how many items it claimed. */
  async turn(): Promise<number> {
    this.turnCount++;
    await this.channel.prepare?.();
    const claimedAt = this.time.now();
    const claimed = await this.channel.claim();
    if (claimed.length === 0) return 0;
    const sent = await this.channel.send(claimed);
    await this.recordWithinLease(sent, claimedAt);
    return claimed.length;
  }

  /** Records a turn's outcomes; while the database is away, again every second as long as their leases may hold. */
  private async recordWithinLease(sent: ReadonlyArray<Sent>, claimedAt: number): Promise<void> {
    for (;;) {
      try {
        return await this.channel.record(sent);
      } catch (error) {
        const outage = this.options.isOutage?.(error) ?? false;
        if (!outage || this.stopping || this.time.now() - claimedAt + OUTCOME_RETRY_MS >= this.options.leaseMs) throw error;
        this.observer.failedTurn?.(error);
        await this.pause(OUTCOME_RETRY_MS);
      }
    }
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const startedAt = this.time.now();
      this.woken = false;
      let claimed = 0;
      try {
        claimed = await this.turn();
      } catch (error) {
        this.observer.failedTurn?.(error);
      }
      if (this.stopping || claimed > 0) continue;
      if (!this.woken) await this.sleep(await this.idleMs());
      // Woken: wake-ups within the gather time of this turn's start are one turn.
      if (this.woken && !this.stopping) await this.pause((this.options.gatherMs ?? WAKE_GATHER_MS) - (this.time.now() - startedAt));
    }
  }

  /** How long to sleep with nothing to do: the fallback poll, or until the channel's next item is due if sooner (at least `IDLE_FLOOR_MS`). */
  private async idleMs(): Promise<number> {
    const due = await this.channel.nextDueInMs?.().catch(() => undefined);
    return Math.min(this.options.pollIntervalMs, Math.max(IDLE_FLOOR_MS, due ?? Number.POSITIVE_INFINITY));
  }

  /** Sleeps `ms`, or until woken or stopped. */
  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopping) return Promise.resolve();
    return new Promise((done) => {
      const finish = () => {
        cancel();
        this.wakeUp = undefined;
        done();
      };
      const cancel = this.time.after(ms, finish);
      this.wakeUp = finish;
    });
  }

  /** Waits `ms` whatever wakes it (unless stopped). */
  private pause(ms: number): Promise<void> {
    if (ms <= 0 || this.stopping) return Promise.resolve();
    return new Promise((done) => {
      const cancel = this.time.after(ms, () => {
        this.wakeUp = undefined;
        done();
      });
      this.wakeUp = () => {
        if (!this.stopping) return;
        cancel();
        this.wakeUp = undefined;
        done();
      };
    });
  }
}
