import { ERROR_TEXT_MAX_CHARACTERS, keepsRequest, type RequestLogRecord, storableText } from "@platter/domain";
import { hasMissingPartition, isDatabaseUnavailable, isDataRefusal, RequestLog, type RequestRuntime } from "@platter/persistence";
import { readRequestHistorySettings, type RequestHistorySettings } from "@platter/ops";
import type { Logger } from "pino";

/**
 * The request log's writer in the API process: each kept request (every 4xx and 5xx of an
 * authenticated request, and `successPercent` of its successes) is added to a buffer in memory,
 * and the buffer is written once a second in one statement, so a request does no database write
 * of its own. The buffer is bounded, and so is each organization's share of one flush: an
 * organization sending a flood of failing requests fills only its own share, and the others'
 * requests are still logged. A request's error text is made storable and bounded when it is added
 * (`storableText`), and a batch the database refuses for its data (not for an outage) is split until
 * every good row is written, so no row can sink the others' (`RequestLogDrops.refused`). What is
 * dropped is counted (metrics), never waited for.
 */

/**
 * Whether the database refused some rows of a batch rather than being unavailable: their data
 * (`isDataRefusal`), or a time no partition of the log takes (`hasMissingPartition`: a request's
 * clock far off the database's, or partitions not made ahead), which answers other requests as an
 * outage but here is about those rows only.
 */
const refusesRows = (error: unknown): boolean => hasMissingPartition(error) || (isDataRefusal(error) && !isDatabaseUnavailable(error));

/** How the request log is kept (`REQUEST_HISTORY_*`, read by ops). */
export type RequestLogSettings = RequestHistorySettings;

/** How the request log is kept when nothing is configured: 1 % of successes, for 14 days. */
export const REQUEST_HISTORY_DEFAULTS: RequestLogSettings = readRequestHistorySettings({});

/** Bounds of the buffer between flushes. */
export interface RequestLogBounds {
  readonly flushEveryMs: number;
  /** Requests held at most, all organizations together. */
  readonly maxBuffered: number;
  /** Requests one organization may add between two flushes. */
  readonly perOrganization: number;
}

const DEFAULT_BOUNDS: RequestLogBounds = { flushEveryMs: 1_000, maxBuffered: 20_000, perOrganization: 2_000 };

/**
 * Statements one flush may spend, beyond its first, on splitting a batch the database refused: one
 * refused row among 20,000 is found in about 30; rows still unwritten when they are spent are
 * counted as refused, so a systematic refusal costs each flush a bounded number of statements.
 */
export const REFUSED_BATCH_SPLIT_STATEMENTS = 200;

/** Refused rows are logged at most this often (with how many since the last line), however often they come. */
const REFUSAL_LOG_EVERY_MS = 60_000;

/** Why requests were not logged. */
export interface RequestLogDrops {
  /** The buffer was full. */
  full: number;
  /** Their organization had used its share of one flush. */
  organizationShare: number;
  /** Their batch could not be written (the database was down). */
  failed: number;
  /** The database refused the row itself (its data), while the rest of its batch was written. */
  refused: number;
}

/** The API process's request-log writer (see the module comment). */
export class RequestLogWriter {
  private buffer: RequestLogRecord[] = [];
  private perOrganization = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private failing = false;
  private refusedUnlogged = 0;
  private refusalLoggedAt = Number.NEGATIVE_INFINITY;
  readonly drops: RequestLogDrops = { full: 0, organizationShare: 0, failed: 0, refused: 0 };
  written = 0;

  private readonly runtime: RequestRuntime;
  private readonly logger: Logger;
  private readonly settings: RequestLogSettings;
  private readonly bounds: RequestLogBounds;

  constructor(runtime: RequestRuntime, logger: Logger, settings: RequestLogSettings, bounds: RequestLogBounds = DEFAULT_BOUNDS) {
    this.runtime = runtime;
    this.logger = logger;
    this.settings = settings;
    this.bounds = bounds;
  }

  /** Whether a request that ended with `status` is kept (every failure; the sampled share of successes). */
  keeps(status: number): boolean {
    return keepsRequest(status, this.settings.successPercent / 100);
  }

  /** Adds a kept request to the next flush, or counts why it cannot be. */
  add(record: RequestLogRecord): void {
    if (this.buffer.length >= this.bounds.maxBuffered) {
      this.drops.full++;
      return;
    }
    const held = this.perOrganization.get(record.organization_id) ?? 0;
    if (held >= this.bounds.perOrganization) {
      this.drops.organizationShare++;
      return;
    }
    this.perOrganization.set(record.organization_id, held + 1);
    // Only a failure carries a text: a success costs nothing here.
    const error = record.error === null ? null : storableText(record.error, ERROR_TEXT_MAX_CHARACTERS);
    this.buffer.push(error === record.error ? record : { ...record, error });
  }

  /**
   * Writes everything added so far. A batch the database refuses for its data is split (see
   * `writeSplitting`); one it cannot take because it is unavailable is dropped, counted, and logged
   * once per outage.
   */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.buffer.length === 0) return;
      const batch = this.buffer;
      this.buffer = [];
      this.perOrganization = new Map();
      try {
        this.written += await this.append(batch);
        if (this.failing) this.logger.info("request log written again");
        this.failing = false;
      } catch (error) {
        // Only a refusal of some rows' data is worth splitting for; anything else (an outage, a full disk,
        // a deadlock) drops the batch as failed rather than adding statements while the server struggles.
        if (refusesRows(error)) await this.writeSplitting(batch, error);
        else this.unavailable(error, batch.length);
      }
    });
    return this.flushing;
  }

  private append(records: ReadonlyArray<RequestLogRecord>): Promise<number> {
    return this.runtime.runPromise(RequestLog.use((log) => log.append(records)));
  }

  private unavailable(error: unknown, requests: number): void {
    this.drops.failed += requests;
    if (!this.failing) this.logger.warn({ err: error, requests }, "request log could not be written; its requests are dropped until it can");
    this.failing = true;
  }

  /**
   * Writes a refused batch in halves, larger parts first, each organization's rows together (one
   * organization's bad rows are then one run to close in on), until every part is written or is a
   * single refused row, or `REFUSED_BATCH_SPLIT_STATEMENTS` are spent. An outage met on the way drops
   * what is left as `failed`.
   */
  private async writeSplitting(batch: ReadonlyArray<RequestLogRecord>, firstError: unknown): Promise<void> {
    // A refusal is an answer: the database is there.
    if (this.failing) this.logger.info("request log written again");
    this.failing = false;
    const parts: Array<ReadonlyArray<RequestLogRecord>> = [[...batch].sort((x, y) => x.organization_id - y.organization_id)];
    let refused = 0;
    let statements = 0;
    for (let part = parts.shift(); part !== undefined; part = parts.shift()) {
      if (part.length === 1) {
        refused++;
        continue;
      }
      if (statements >= REFUSED_BATCH_SPLIT_STATEMENTS) {
        refused += part.length;
        continue;
      }
      const half = Math.ceil(part.length / 2);
      const pieces = [part.slice(0, half), part.slice(half)];
      for (const [index, piece] of pieces.entries()) {
        statements++;
        try {
          this.written += await this.append(piece);
        } catch (error) {
          if (!refusesRows(error)) {
            this.unavailable(error, [...pieces.slice(index), ...parts].reduce((sum, left) => sum + left.length, 0));
            this.countRefused(refused, firstError);
            return;
          }
          parts.push(piece);
        }
      }
    }
    this.countRefused(refused, firstError);
  }

  private countRefused(refused: number, error: unknown): void {
    if (refused === 0) return;
    this.drops.refused += refused;
    this.refusedUnlogged += refused;
    const now = Date.now();
    if (now - this.refusalLoggedAt < REFUSAL_LOG_EVERY_MS) return;
    this.logger.warn({ err: error, requests: this.refusedUnlogged }, "request log refused some requests' rows; the rest of their batches were written");
    this.refusedUnlogged = 0;
    this.refusalLoggedAt = now;
  }

  /** Flushes every `flushEveryMs` until `stop`. */
  start(): void {
    this.timer = setInterval(() => void this.flush(), this.bounds.flushEveryMs);
    this.timer.unref();
  }

  /** Stops flushing on a timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
