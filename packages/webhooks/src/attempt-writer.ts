import type { AttemptRecord, DeliveryPolicy } from "@platter/domain";
import { Effect } from "effect";
import type { DeliveryStorage } from "./webhook-dispatcher.ts";

/**
 * Buffers attempt results and writes them in batches: one transaction per batch instead of one
 * per attempt. A result lost in a crash only means the delivery is retried once its lease runs out.
 */
export class AttemptWriter {
  private buffer: AttemptRecord[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly store: DeliveryStorage;
  private readonly policy: DeliveryPolicy;
  private readonly onError: (error: unknown) => void;
  private readonly onWritten: () => void;

  constructor(store: DeliveryStorage, policy: DeliveryPolicy, onError: (error: unknown) => void, onWritten: () => void) {
    this.store = store;
    this.policy = policy;
    this.onError = onError;
    this.onWritten = onWritten;
  }

  /**
   * Queues a result; writes at 1,000 results or after 50 ms, whichever comes first: large batches
   * cost the database less per result (see the dispatcher's claims). A crash loses at most those
   * 50 ms of results, whose deliveries are tried again once their leases end (at least once).
   */
  add(record: AttemptRecord): void {
    this.buffer.push(record);
    if (this.buffer.length >= 1_000) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), 50);
  }

  /** Writes everything queued so far; batches are written one after another, never concurrently. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length === 0) return this.flushing;
    this.flushing = this.flushing.then(() => this.write(batch)).then(this.onWritten);
    return this.flushing;
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
