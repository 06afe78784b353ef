import type { AlertMailStorage, AttemptRecord, DeliveryPolicy, DeliveryStorage, HeldSlots, DatabaseUnavailable } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { RECORD, recordValues } from "./attempt-record.ts";
import { type ClaimedRow, claimStatement, NEXT_DUE, nextDueValues, toDue } from "./delivery-claim.ts";
import { type DeliveryListener, type DispatcherWakers, listenForDeliveries } from "./delivery-listener.ts";
import { type OperatorChannel, operatorNoticeStorage } from "./operator-notices.ts";
import { alertMailQueue } from "./alert-mails.ts";
import { openedSecrets } from "./opened-secrets.ts";
import { type EndpointQueueStats, queueMetrics } from "./queue-metrics.ts";

export type { EndpointQueueStats } from "./queue-metrics.ts";
export type { OperatorChannel } from "./operator-notices.ts";

/**
 * The delivery queue: the dispatcher's storage, wired from one file per job: the fair claim
 * (delivery-claim.ts), recording attempts in batches (attempt-record.ts; one transaction for many
 * attempts keeps throughput high), the operator's notice queue (operator-notices.ts), the metrics
 * reads (queue-metrics.ts) and LISTEN (delivery-listener.ts).
 *
 * Row writes per delivery: its insert (in the transaction that records the message), the claim's
 * update (a HOT one: the lease columns are not indexed), the attempt's insert and the result's
 * update. Endpoints are written only when their state changes (a failure, the first success after
 * failures). Every statement goes straight to the pool (`Database.rows`), one round trip each.
 *
 * The one system-level store: a dispatcher serves every organization, so these statements work
 * across organizations by design, carrying each row's own organization along. It is not part of
 * the API's runtime, and it reads no organization data for anyone.
 */
/** The dispatcher's storage service (see the file's comment). */
export class DeliveryQueue extends Context.Service<
  DeliveryQueue,
  DeliveryStorage & {
    /** Pending deliveries, for the queue-depth gauge. */
    readonly queueDepth: () => Effect.Effect<number, DatabaseUnavailable>;
    /** Per endpoint with deliveries pending or a circuit not closed: depth, in flight, circuit. */
    readonly endpointStats: () => Effect.Effect<ReadonlyArray<EndpointQueueStats>, DatabaseUnavailable>;
    /**
     * Calls `wakers.deliveries` whenever deliveries commit, and `wakers.notices` whenever endpoint
     * notices do (LISTEN/NOTIFY on a connection of its own, to `Database.listenUrl`); without one (a
     * transaction pooler and no `listenUrl`) it listens to nothing and says so (`listening: false`):
     * the dispatcher and its mailer poll.
     */
    readonly listen: (wakers: DispatcherWakers, onError: (error: unknown) => void) => DeliveryListener;
    /**
     * The operator channel's queue: the endpoint notices pending their operational webhook, sent to
     * `channel` (the operator's URL and secret, never an organization's), claimed and recorded like deliveries.
     */
    readonly operatorNotices: (channel: OperatorChannel) => DeliveryStorage;
    /** The alert e-mails' outbox (every organization's), for the dispatcher's mailer: see alert-mails.ts. */
    readonly alertMails: () => AlertMailStorage;
  }
>()("platter/persistence/DeliveryQueue") {
  static readonly layer = Layer.effect(
    DeliveryQueue,
    Effect.gen(function* () {
      const { rows, listenUrl, secrets: cipher } = yield* Database;
      const secrets = openedSecrets(cipher);
      return DeliveryQueue.of({
        claimDue: Effect.fnUntraced(function* (
          limit: number, leaseMs: number, policy: DeliveryPolicy, held: HeldSlots,
        ) {
          const claim = claimStatement(limit, leaseMs, policy, held);
          return toDue(yield* rows<ClaimedRow>(claim.text, claim.values), secrets);
        }),
        recordAttempts: Effect.fnUntraced(function* (
          records: ReadonlyArray<AttemptRecord>, policy: DeliveryPolicy,
        ) {
          if (records.length > 0) yield* rows(RECORD, recordValues(records, policy));
        }),
        ...queueMetrics(rows),
        nextDueInMs: Effect.fnUntraced(function* (policy: DeliveryPolicy) {
          const [row] = yield* rows<{ ms: number | null }>(NEXT_DUE, nextDueValues(policy));
          return row?.ms === null || row?.ms === undefined ? undefined : Math.max(0, Number(row.ms));
        }),
        operatorNotices: (channel) => operatorNoticeStorage(rows, channel),
        alertMails: () => alertMailQueue(rows),
        listen: (wakers, onError) =>
          listenUrl === undefined ? { listening: false, close: async () => {} } : listenForDeliveries(listenUrl, wakers, onError),
      });
    }),
  );
}
