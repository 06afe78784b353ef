import type { AttemptOutcome, OutboxRecord } from "./webhook-delivery.ts";

/**
 * The dispatcher's view of storage. Deliveries are claimed under a lease: a dispatcher that dies
 * mid-attempt simply lets the lease run out and the delivery becomes due again (at-least-once).
 * A plain async port: the dispatcher is a small loop of I/O, not a tree of effects.
 */

/** A delivery this dispatcher holds the lease of and should attempt now. */
export interface DueDelivery {
  readonly id: number;
  readonly organizationId: number;
  readonly endpointId: number;
  readonly url: string;
  readonly secret: string;
  readonly envelopeId: string;
  /** The exact bytes to send, the same on every try. */
  readonly body: string;
  /** 1 for the first try. */
  readonly attempt: number;
  /** Proves the lease is still ours when the result is written. */
  readonly leaseToken: string;
}

/** What one try did. */
export interface AttemptResult {
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | undefined;
  readonly error: string | undefined;
  /** The first KiB of the response body. */
  readonly responseBody: string | undefined;
  readonly outcome: AttemptOutcome;
}

/** One try of a delivery, and what happens next. */
export interface AttemptRecord extends AttemptResult {
  readonly delivery: DueDelivery;
  /** When failed: delay before the next try, or undefined when the schedule is exhausted. */
  readonly retryDelayMs: number | undefined;
}

export interface WebhookStore {
  /**
   * Turns up to `limit` unprocessed outbox rows into one delivery per subscribed, enabled
   * endpoint, in the transaction that reads them. `bodyOf` renders the bytes to send; the first
   * try is due `firstAttemptDelayMs` from now. Returns how many outbox rows were processed.
   */
  readonly fanOut: (
    limit: number,
    bodyOf: (record: OutboxRecord) => string | undefined,
    firstAttemptDelayMs: number,
  ) => Promise<number>;
  /** Leases up to `limit` due deliveries of enabled endpoints for `leaseMs`. */
  readonly claimDue: (limit: number, leaseMs: number) => Promise<DueDelivery[]>;
  /**
   * Writes attempt results in one transaction. A result whose lease was lost (expired and taken
   * by another dispatcher) is still logged as an attempt but does not change the delivery.
   * Endpoints that answered 410, or failed for longer than `failureWindowMs`, are disabled.
   */
  readonly recordAttempts: (records: ReadonlyArray<AttemptRecord>, failureWindowMs: number) => Promise<void>;
  /** Pending deliveries, for the queue-depth gauge. */
  readonly queueDepth: () => Promise<number>;
  /** Milliseconds until the next pending delivery is due (undefined when none), to sleep exactly. */
  readonly nextDueInMs: () => Promise<number | undefined>;
}
