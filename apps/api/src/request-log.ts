import { keepsRequest, type RequestLogRecord } from "@platter/domain";
import { RequestLog, type RequestRuntime } from "@platter/persistence";
import { readRequestHistorySettings, type RequestHistorySettings } from "@platter/ops";
import type { Logger } from "pino";

/**
 * The request log's writer in the API process: each kept request (every 4xx and 5xx of an
 * authenticated request, and `successPercent` of its successes) is added to a buffer in memory,
 * and the buffer is written once a second in one statement, so a request does no database write
 * of its own. The buffer is bounded, and so is each organization's share of one flush: an
 * organization sending a flood of failing requests fills only its own share, and the others'
 * requests are still logged. What is dropped is counted (metrics), never waited for.
 */

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

/** Why requests were not logged. */
export interface RequestLogDrops {
  /** The buffer was full. */
  full: number;
  /** Their organization had used its share of one flush. */
  organizationShare: number;
  /** Their batch could not be written (the database was down). */
  failed: number;
}

/** The API process's request-log writer (see the module comment). */
export class RequestLogWriter {
  private buffer: RequestLogRecord[] = [];
  private perOrganization = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private failing = false;
  readonly drops: RequestLogDrops = { full: 0, organizationShare: 0, failed: 0 };
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
    this.buffer.push(record);
  }

  /** Writes everything added so far; a failed write is logged once per outage and its requests counted as dropped. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.buffer.length === 0) return;
      const batch = this.buffer;
      this.buffer = [];
      this.perOrganization = new Map();
      try {
        this.written += await this.runtime.runPromise(RequestLog.use((log) => log.append(batch)));
        if (this.failing) this.logger.info("request log written again");
        this.failing = false;
      } catch (error) {
        this.drops.failed += batch.length;
        if (!this.failing) this.logger.warn({ err: error, requests: batch.length }, "request log could not be written; its requests are dropped until it can");
        this.failing = true;
      }
    });
    return this.flushing;
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
