import type { AttemptRecord, DeliveryPolicy, DeliveryStorage } from "@platter/domain";
import { Effect } from "effect";
import { type DispatcherTime, realTime } from "./dispatcher-time.ts";

/** How a writer rides out a database outage: which failures are one, and how long it keeps results for it. */
export interface OutageRetry {
  /** Whether a failed write means the database is away (its results are kept and written again), not that it refused them. */
  readonly isOutage: (error: unknown) => boolean;
  /**
   * How long after an outage's first failed write its results are still kept: the lease (a result
   * written after its delivery's lease ended is refused anyway, and the delivery has come back).
   */
  readonly keepForMs: number;
}

/** No failure is an outage: a failed batch is written again one result at a time, then given up. */
export const NO_OUTAGE_RETRY: OutageRetry = { isOutage: () => false, keepForMs: 0 };

/** While the database is away, a writer tries its kept results again this often. */
export const OUTAGE_RETRY_MS = 1_000;

/**
 * Buffers attempt results and writes them in batches: one transaction per batch instead of one
 * per attempt. A result lost in a crash only means the delivery is retried once its lease runs out.
 * While the database is away (`OutageRetry.isOutage`) a batch's results are kept and written again
 * every `OUTAGE_RETRY_MS` with whatever was queued meanwhile, for up to `keepForMs`; then (or at
 * `close`) they are given up, and their deliveries come back when their leases end.
 */
export class AttemptWriter {
  private buffer: AttemptRecord[] = [];
  /** What to call once each buffered record is written (or failed to be): `add`'s `written`, in buffer order. */
  private whenWritten: Array<(() => void) | undefined> = [];
  /** The batch being written (or the last written). */
  private flushing: Promise<void> = Promise.resolve();
  /** The next batch, waiting for `flushing`: it takes every result queued by the time its write starts. */
  private next: Promise<void> | undefined;
  private cancelTimer: (() => void) | undefined;
  private readonly store: DeliveryStorage;
  private readonly policy: DeliveryPolicy;
  private readonly onError: (error: unknown) => void;
  private readonly onWritten: () => void;
  private readonly time: DispatcherTime;
  private readonly outage: OutageRetry;
  /** When the current outage's first write failed (`time.now()`); undefined while writes succeed. */
  private outageSince: number | undefined;
  /** `close` was called: results an outage keeps from being written are given up at once. */
  private closing = false;

  constructor(
    store: DeliveryStorage, policy: DeliveryPolicy, onError: (error: unknown) => void, onWritten: () => void, time: DispatcherTime = realTime,
    outage: OutageRetry = NO_OUTAGE_RETRY,
  ) {
    this.store = store;
    this.policy = policy;
    this.onError = onError;
    this.onWritten = onWritten;
    this.time = time;
    this.outage = outage;
  }

  /**
   * Queues a result (`written` is called once its batch is written, or failed to be); writes at 1,000 results or after 50 ms, whichever comes first: large batches
   * cost the database less per result (see the dispatcher's claims). A crash loses at most those
   * 50 ms of results, whose deliveries are tried again once their leases end (at least once).
   */
  add(record: AttemptRecord, written?: () => void): void {
    this.buffer.push(record);
    this.whenWritten.push(written);
    if (this.buffer.length >= 1_000) void this.flush();
    else this.cancelTimer ??= this.time.after(50, () => void this.flush());
  }

  /**
   * Writes everything queued so far. Batches are written one after another, never concurrently, and
   * results queued while a batch is being written wait for it as one batch (taken when its write
   * starts), so a slow database gets fewer, larger batches rather than a growing line of small ones.
   */
  flush(): Promise<void> {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (this.next !== undefined) return this.next;
    if (this.buffer.length === 0) return this.flushing;
    const next = this.flushing.then(() => {
      this.next = undefined;
      const batch = this.buffer;
      const whenWritten = this.whenWritten;
      this.buffer = [];
      this.whenWritten = [];
      return this.write(batch).then((keptFrom) => {
        const settled = keptFrom < batch.length && this.keep(batch.slice(keptFrom), whenWritten.slice(keptFrom))
          ? whenWritten.slice(0, keptFrom)
          : whenWritten;
        for (const written of settled) written?.();
        this.onWritten();
      });
    });
    this.next = next;
    this.flushing = next;
    return next;
  }

  /** Writes what is queued and gives up whatever an outage keeps from being written: for a graceful stop. */
  close(): Promise<void> {
    this.closing = true;
    return this.flush();
  }

  /**
   * One transaction for the batch; if the database refuses it, each result on its own, so one bad
   * row cannot sink the others. Returns from which result on an outage kept them from being written
   * (`batch.length`: none; every result before it is written, or refused and reported).
   */
  private async write(batch: ReadonlyArray<AttemptRecord>): Promise<number> {
    try {
      await Effect.runPromise(this.store.recordAttempts(batch, this.policy));
      this.outageSince = undefined;
      return batch.length;
    } catch (error) {
      if (this.outage.isOutage(error) || batch.length === 1) {
        this.onError(error);
        return this.outage.isOutage(error) ? 0 : 1;
      }
      for (let i = 0; i < batch.length; i++) {
        try {
          await Effect.runPromise(this.store.recordAttempts([batch[i]!], this.policy));
          this.outageSince = undefined;
        } catch (error) {
          this.onError(error);
          if (this.outage.isOutage(error)) return i;
        }
      }
      return batch.length;
    }
  }

  /**
   * Puts results an outage kept from being written back in front of the queue, to be written again
   * after `OUTAGE_RETRY_MS` with what is queued meanwhile; unless `keepForMs` has passed since the
   * outage's first failed write, or the writer is closing: then they are given up (false).
   */
  private keep(records: ReadonlyArray<AttemptRecord>, whenWritten: ReadonlyArray<(() => void) | undefined>): boolean {
    const now = this.time.now();
    this.outageSince ??= now;
    if (this.closing || now - this.outageSince >= this.outage.keepForMs) return false;
    this.buffer = [...records, ...this.buffer];
    this.whenWritten = [...whenWritten, ...this.whenWritten];
    this.cancelTimer?.();
    this.cancelTimer = this.time.after(OUTAGE_RETRY_MS, () => void this.flush());
    return true;
  }
}
