import { Effect } from "effect";
import { createOpsServer, listenOn, type TraceExport, watchOutages } from "@platter/ops";
import { announceInstance, HistoryPartitions, Housekeeping, isDatabaseUnavailable, pingDatabase, WEBHOOK_HISTORY, type DispatcherRuntime } from "@platter/persistence";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import { alertMailChannel, operatorWebhookChannel, OutboxRunner, smtpMailSender, WebhookDispatcher } from "@platter/webhooks";
import type { Logger } from "pino";
import type { DispatcherConfig } from "./config.ts";
import { recordAttemptSpan, tracedDeliveryStorage } from "./delivery-traces.ts";
import { createDispatcherMetrics } from "./metrics.ts";

/** A running dispatcher: its ops port and a graceful stop. */
export interface RunningDispatcher {
  readonly opsPort: number;
  /** Claims nothing more, finishes in-flight attempts and records them; the platform closes the pool. */
  readonly stop: () => Promise<void>;
}

/** Starts delivering on the platform's delivery queue; wakes on NOTIFY, polls as a fallback. */
export const startDispatcher = async (
  config: DispatcherConfig, logger: Logger, runtime: DispatcherRuntime, traces?: TraceExport,
): Promise<RunningDispatcher> => {
  const store = await runtime.runPromise(DeliveryQueue.use(Effect.succeed));
  const metrics = createDispatcherMetrics(store, () => dispatcher);
  // An outage fails every loop round until it passes: said once when it starts, once when it ends.
  const outages = watchOutages({
    probe: () => runtime.runPromise(pingDatabase),
    onDown: (reason) => logger.error({ err: reason }, "database unavailable: delivery paused until it is back"),
    onUp: (downForMs) => logger.info({ downForMs }, "database available again: delivery resumed"),
  });
  let unopenedSaidAt = Number.NEGATIVE_INFINITY;
  const dispatcher = new WebhookDispatcher(traces === undefined ? store : tracedDeliveryStorage(store, traces), config, {
    attempted: (outcome, durationMs, delivery, statusCode) => {
      metrics.observer.attempted?.(outcome, durationMs, delivery);
      if (traces !== undefined) recordAttemptSpan(traces, outcome, durationMs, delivery, statusCode);
      logger.debug({ delivery: delivery.id, attempt: delivery.attempt, outcome, durationMs }, "attempt");
    },
    failedLoop: (error) => {
      metrics.observer.failedLoop?.(error);
      if (isDatabaseUnavailable(error)) outages.down(error);
      else logger.error({ err: error }, "dispatcher loop error");
    },
    unopened: (count) => {
      // Said at most once a minute: a key missing from SECRET_ENCRYPTION_KEYS here leaves its deliveries to other processes.
      if (Date.now() - unopenedSaidAt < 60_000) return;
      unopenedSaidAt = Date.now();
      logger.error({ deliveries: count }, "signing secrets this process's SECRET_ENCRYPTION_KEYS do not open: their deliveries are left unsent under their lease");
    },
  }, { isOutage: isDatabaseUnavailable });
  const ops = createOpsServer({
    isReady: () => runtime.runPromise(pingDatabase).then(() => true),
    metrics: metrics.registry,
  });
  // The port first: a taken one stops the start before any delivery is claimed.
  const opsPort = await listenOn(ops, config.opsPort, config.opsHost, "DISPATCHER_OPS_PORT");
  // Its connection lost with the database is part of the outage (said once); it reconnects every second meanwhile.
  // New notices wake both outbox runners (declared below: a NOTIFY arrives only after this start has run on).
  const listener = store.listen(
    { deliveries: () => dispatcher.wake(), notices: () => { mailer?.wake(); operatorChannel?.wake(); } },
    (error) => (isDatabaseUnavailable(error) ? outages.down(error) : logger.warn({ err: error }, "delivery listener")),
  );
  if (!listener.listening) {
    logger.warn(
      { pollIntervalMs: config.pollIntervalMs },
      "DATABASE_URL is a transaction pooler and DATABASE_LISTEN_URL is unset: no LISTEN, new deliveries are found by polling every DISPATCHER_POLL_INTERVAL",
    );
  }
  // The stored notices' two outboxes, each on its own `OutboxRunner` (so a slow SMTP relay never holds
  // the operator's webhooks, nor the other way round), woken by new notices (NOTIFY platter_notices)
  // and looking by themselves only rarely (retries, a stopped holder's items), unless nothing wakes them.
  const idlePollMs = listener.listening ? OUTBOX_IDLE_POLL_MS : config.pollIntervalMs;
  // Alert e-mails to organizations' developers: each mail committed `sending` under its lease before its SMTP call, so none is sent twice.
  const mailer = config.mailServer === undefined ? undefined : new OutboxRunner(
    alertMailChannel(store.alertMails(), smtpMailSender(config.mailServer), { developerAreaUrl: config.developerAreaUrl, leaseMs: ALERT_MAIL_LEASE_MS }, {
      mailed: (mail, outcome) =>
        logger[outcome.outcome === "sent" ? "debug" : "warn"]({ mail: mail.id, attempt: mail.attempt, ...outcome }, "alert e-mail"),
      abandoned: (count) => logger.warn({ mails: count }, "alert e-mails whose sender stopped during the SMTP call: not sent again"),
    }),
    { pollIntervalMs: idlePollMs, leaseMs: ALERT_MAIL_LEASE_MS },
    { failedTurn: (error) => (isDatabaseUnavailable(error) ? outages.down(error) : logger.error({ err: error }, "alert mailer turn error")) },
  );
  // The operator channel: the endpoint notices sent to the operator's URL with its own few slots (never
  // a business slot), through the same signed POST as a delivery, retried on the retry schedule.
  const operatorChannel = config.operatorWebhook === undefined ? undefined : new OutboxRunner(
    operatorWebhookChannel(
      store.operatorNotices({ url: config.operatorWebhook.url, secret: config.operatorWebhook.secret }),
      { ...config, concurrency: config.operatorWebhook.concurrency },
      {
        attempted: (outcome, durationMs, notice) => {
          metrics.operatorObserver.attempted?.(outcome, durationMs, notice);
          logger[outcome === "succeeded" ? "debug" : "warn"]({ notice: notice.id, attempt: notice.attempt, outcome, durationMs }, "operational webhook attempt");
        },
      },
    ),
    { pollIntervalMs: idlePollMs, leaseMs: config.leaseMs, isOutage: isDatabaseUnavailable },
    {
      failedTurn: (error) => {
        metrics.operatorObserver.failedLoop?.(error);
        if (isDatabaseUnavailable(error)) outages.down(error);
        else logger.error({ err: error }, "operator channel turn error");
      },
    },
  );
  // Partitions ahead before anything is claimed or recorded (the API makes them too). They are made
  // well ahead, so one not made now (a lock not had within its timeout) is made by the next sweep.
  await runtime.runPromise(makeHistoryPartitionsAhead(config)).catch((err) => logger.warn({ err }, "history partitions not made ahead at start: the sweep tries again"));
  // Each endpoint's cap is shared out between the dispatchers live.
  const instance = await announceInstance((program) => runtime.runPromise(program), "dispatcher", (live) => dispatcher.shareBetween(live));
  dispatcher.start();
  operatorChannel?.start();
  mailer?.start();
  const history = sweepHistoryEvery(config, runtime, logger);
  logger.info({
    opsPort, concurrency: config.concurrency, allowPrivateNetworks: config.allowPrivateNetworks,
    operatorWebhook: config.operatorWebhook === undefined ? "unset: endpoint notices are shown in the Developer area only" : config.operatorWebhook.url,
    alertMail: config.mailServer === undefined ? "SMTP_URL unset: no alert e-mails are sent" : `via SMTP from ${config.mailServer.from}`,
  }, "dispatcher running");
  return {
    opsPort,
    stop: async () => {
      await history.stop();
      await listener.close();
      await dispatcher.stop();
      await operatorChannel?.stop();
      await mailer?.stop();
      await instance.leave();
      await new Promise((done) => ops.close(done));
    },
  };
};

/**
 * How often an outbox runner woken by new notices (LISTEN) looks for work by itself: alert mails'
 * retries (a minute or more apart), mails abandoned by a stopped sender and notices whose holder
 * stopped are found within this (the operator channel's retries wake it when due).
 */
const OUTBOX_IDLE_POLL_MS = 30_000;
/** Makes webhook history's partitions ahead (`WEBHOOK_HISTORY_PARTITION`): at start and at every sweep. */
const makeHistoryPartitionsAhead = (config: DispatcherConfig) =>
  HistoryPartitions.use((h) => h.makeAhead(WEBHOOK_HISTORY, config.webhookHistory.partitionMs, config.webhookHistory.aheadMs));

/** How long a claimed alert e-mail is held: far longer than an SMTP call may take (its timeouts), so a live sender never loses it. */
const ALERT_MAIL_LEASE_MS = 5 * 60_000;

/** At most this many rows of each kind go per batch, each batch its own short transaction. */
const HISTORY_BATCH = 500;
/** How long after they expire Developer-area sessions and sign-in links are removed. */
const EXPIRED_ACCESS_GRACE_MS = 24 * 3600_000;
/** How long an ended API key (revoked, expired, rolled out) stays listed before it is removed. */
const ENDED_KEY_GRACE_MS = 30 * 24 * 3600_000;
/** Batches per sweep at most, so one sweep never runs long; the next sweep goes on. */
const HISTORY_BATCHES_PER_SWEEP = 100;

/**
 * Removes the delivery history older than the retention window every `retentionSweepMs`, batch by
 * batch until a batch finds less than a full one (or the sweep's bound is reached). A failure is
 * logged and the next sweep tries again.
 */
const sweepHistoryEvery = (config: DispatcherConfig, runtime: DispatcherRuntime, logger: Logger) => {
  let running: Promise<void> | undefined;
  const sweep = async () => {
    // First, a disabled endpoint's stragglers (a create or replay that raced its disable) end as the disable ended the rest.
    for (let batch = 0; batch < HISTORY_BATCHES_PER_SWEEP; batch++) {
      if ((await runtime.runPromise(Housekeeping.use((h) => h.endDeliveriesOfDisabledEndpoints(HISTORY_BATCH)))) < HISTORY_BATCH) break;
    }
    // Webhook history by partition: the next ones made, the pending deliveries of those reaching the
    // retention settled ("history expired"), and the expired ones dropped whole.
    await runtime.runPromise(makeHistoryPartitionsAhead(config));
    await runtime.runPromise(HistoryPartitions.use((h) => h.forgetExpired(WEBHOOK_HISTORY, config.retentionMs, HISTORY_BATCH)));
    // Endpoint notices go after the same retention, once the operator's copy has settled.
    for (let batch = 0; batch < HISTORY_BATCHES_PER_SWEEP; batch++) {
      if ((await runtime.runPromise(Housekeeping.use((h) => h.pruneNotices(config.retentionMs, HISTORY_BATCH)))) < HISTORY_BATCH) break;
    }
    // Deleted endpoints once retention has taken their last delivery and notice.
    for (let batch = 0; batch < HISTORY_BATCHES_PER_SWEEP; batch++) {
      if ((await runtime.runPromise(Housekeeping.use((h) => h.pruneDeletedEndpoints(HISTORY_BATCH)))) < HISTORY_BATCH) break;
    }
    // The audit log after AUDIT_LOG_RETENTION; then expired Developer-area sessions and sign-in links
    // (those the audit log still names stay until its rows go).
    for (let batch = 0; batch < HISTORY_BATCHES_PER_SWEEP; batch++) {
      if ((await runtime.runPromise(Housekeeping.use((h) => h.pruneAuditLog(config.auditLogRetentionMs, HISTORY_BATCH)))) < HISTORY_BATCH) break;
    }
    for (let batch = 0; batch < HISTORY_BATCHES_PER_SWEEP; batch++) {
      const pruned = await runtime.runPromise(Housekeeping.use((h) => h.pruneExpiredAccess(EXPIRED_ACCESS_GRACE_MS, HISTORY_BATCH)));
      if (pruned.sessions < HISTORY_BATCH && pruned.links < HISTORY_BATCH) break;
    }
    // API keys 30 days after they ended (those the audit log still names stay until its rows go).
    for (let batch = 0; batch < HISTORY_BATCHES_PER_SWEEP; batch++) {
      if ((await runtime.runPromise(Housekeeping.use((h) => h.pruneEndedApiKeys(ENDED_KEY_GRACE_MS, HISTORY_BATCH)))) < HISTORY_BATCH) break;
    }
  };
  // A sweep still running when the next is due just goes on: sweeps never pile up.
  const timer = setInterval(() => {
    running ??= sweep()
      .catch((error: unknown) => logger.warn({ err: error }, "history sweep failed"))
      .finally(() => (running = undefined));
  }, config.retentionSweepMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
};
