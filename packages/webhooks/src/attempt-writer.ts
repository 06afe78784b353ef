import type { AttemptRecord, DeliveryPolicy, DeliveryStorage } from "@platter/domain";
import { Effect } from "effect";
import { type DispatcherTime, realTime } from "./dispatcher-time.ts";

/**
 * Buffers attempt results and writes them in batches: one transaction per batch instead of one
 * per attempt. A result lost in a crash only means the delivery is retried once its lease runs out.
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

  constructor(
    store: DeliveryStorage, policy: DeliveryPolicy, onError: (error: unknown) => void, onWritten: () => void, time: DispatcherTime = realTime,
  ) {
    this.store = store;
    this.policy = policy;
    this.onError = onError;
    this.onWritten = onWritten;
    this.time = time;
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
      return this.write(batch).then(() => {
        for (const written of whenWritten) written?.();
        this.onWritten();
      });
    });
    this.next = next;
    this.flushing = next;
    return next;
  }

  /** One transaction for the batch; if it fails, each result on its own, so one bad row cannot sink the others. */
  private async write(batch: ReadonlyArray<AttemptRecord>): Promise<void> {
    try {
      await Effect.runPromise(this.store.recordAttempts(batch, this.policy));
    } catch (error) {
      if (batch.length === 1) return this.onError(error);
      for (const record of batch) {
        await Effect.runPromise(this.store.recordAttempts([record], this.policy)).catch(this.onError);
      }
    }
  }
}
