import { setTimeout as sleep } from "node:timers/promises";
import { generateSigningSecret } from "@platter/domain";
import PgBoss from "pg-boss";
import { loadDispatcherConfig } from "@platter/dispatcher";
import { coverPartitionSql, HistoryPartitions, openPlatform, WEBHOOK_HISTORY, WebhookEndpointRepository } from "@platter/persistence";
import { backdateHistory, createOrganization, createTestDatabase, TEST_SECRET_KEYS_TEXT } from "@platter/testing";
import { checkpoint, CostMeter, type DatabaseCost, STATS_IDLE_FLUSH_MS } from "./database-cost.ts";
import { type Bench, drainBacklog, type QueueSpec } from "./measurements.ts";
import { enqueueJobs, openPgBoss, QUEUE } from "./pg-boss-queue.ts";
import { deliveryRecord, enqueueBacklog, PLATTER_QUEUE, sql, withPlatterDatabase } from "./platter-outbox.ts";
import { postgresCpuSeconds } from "./process-cpu.ts";
import type { PgBossWorkerSettings } from "./worker-processes.ts";
import { startDispatcherProcess, startPgBossWorker } from "./worker-processes.ts";

/**
 * `lifecycle` (issue 32): what a delivery costs over its whole life, sent and then forgotten. A
 * backlog drained by a dispatcher process (as `dispatcher`), then its history forgotten by the
 * retention the dispatcher runs; the same backlog through the pg-boss worker, then deleted by
 * pg-boss's own maintenance (`deleteAfterSeconds`). And the forgetting alone: a backdated history of
 * many messages (each with a delivery and an attempt) forgotten by the same retention.
 */

/** The sizes of `lifecycle`. */
export interface LifecycleSettings {
  /** Deliveries sent and then forgotten, by each system. */
  readonly deliveries: number;
  /** Messages of the backdated history, each with a delivery and an attempt. */
  readonly forgetMessages: number;
  readonly concurrency: number;
}

/** What one phase of a life (sending, forgetting) cost. */
export interface PhaseCost {
  readonly seconds: number;
  /** CPU of the process(es) doing the work: the dispatcher(s) or pg-boss worker while sending; the process running the retention while forgetting. */
  readonly workerCpuSeconds: number | undefined;
  readonly postgresCpuSeconds: number | undefined;
  readonly database: DatabaseCost;
}

/** One system's deliveries over their life. */
export interface LifecycleRow {
  readonly system: string;
  readonly deliveries: number;
  readonly send: PhaseCost;
  readonly forget: PhaseCost;
  /** Rows of the system's history left once it forgot (0 when everything went). */
  readonly historyLeft: number;
  /** Which tables are its history: a prefix of `schema.table` names. */
  readonly historyTables: RegExp;
}

/** The backdated history forgotten at once. */
export interface ForgetRun {
  readonly messages: number;
  readonly cost: PhaseCost;
  readonly historyLeft: number;
}

/** `lifecycle`'s results. */
export interface LifecycleResult {
  readonly rows: readonly LifecycleRow[];
  readonly forget: ForgetRun;
}

/** What `lifecycle` needs from the run. */
export interface LifecycleRun {
  readonly bench: Bench;
  readonly adminUrl: string;
  readonly signatureHeader: string;
  readonly pgBoss: Omit<PgBossWorkerSettings, "secret" | "signatureHeader">;
  readonly log: (line: string) => void;
}

/** The history tables of Platter (messages, deliveries, attempts, request log; their partitions too), by `schema.table` name. */
export const PLATTER_HISTORY = /^public\.(webhook_messages|webhook_deliveries|webhook_attempts|api_requests)/;
/** pg-boss's tables (its job table and a queue's partition of it). */
export const PG_BOSS_HISTORY = /^pgboss\./;

/** Pending deliveries settled per statement, as the dispatcher's sweep settles them (`HISTORY_BATCH` in apps/dispatcher/src/dispatcher-process.ts). */
const HISTORY_BATCH = 500;
/** The old sweep's ceiling (issue 32): 100 batches of 500 messages a minute per dispatcher. */
export const OLD_SWEEP_CEILING_PER_SECOND = (100 * 500) / 60;
/**
 * The bound the dispatcher's sweep puts on `HistoryPartitions.forgetExpired`; undefined: none. (Row by
 * row, it was 100 batches of 500 messages per `WEBHOOK_RETENTION_SWEEP`; partitions go whole.)
 */
export const SWEEP_BOUND_PER_SECOND: number | undefined = undefined;

/** Work to measure in this process: opened (unmeasured), run (measured), closed (its connections' statistics then counted). */
interface OpenedWork {
  readonly run: () => Promise<void>;
  readonly close: () => Promise<void>;
}

/**
 * Opens `open`'s work in this process and measures it: once the statistics of the writes before are
 * in, the server is checkpointed and the counters and WAL position read; CPU (this process, every
 * PostgreSQL process) and time around `run` only; the counters again once the work has closed and
 * its connections have gone.
 */
const measureHere = async (bench: Bench, adminUrl: string, databaseUrl: string, open: () => Promise<OpenedWork>): Promise<PhaseCost> => {
  await sleep(STATS_IDLE_FLUSH_MS);
  await checkpoint(adminUrl);
  const meter = await CostMeter.open(databaseUrl);
  try {
    const kept = await meter.backends();
    const before = await meter.snapshot();
    const work = await open();
    let measured: Omit<PhaseCost, "database">;
    try {
      const cpuBefore = process.cpuUsage();
      const postgresBefore = postgresCpuSeconds(bench.postmasterPid);
      const began = performance.now();
      await work.run();
      const seconds = (performance.now() - began) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const postgresAfter = postgresCpuSeconds(bench.postmasterPid);
      measured = {
        seconds,
        workerCpuSeconds: (cpu.user + cpu.system) / 1e6,
        postgresCpuSeconds: postgresBefore === undefined || postgresAfter === undefined ? undefined : postgresAfter - postgresBefore,
      };
    } finally {
      await work.close();
    }
    await meter.waitForOthersToExit(kept, 30_000);
    return { ...measured, database: await meter.between(before, await meter.snapshot()) };
  } finally {
    await meter.close();
  }
};

/** The retention on the dispatcher's platform, opened as its process opens it. */
const retentionOnOwnPlatform = (databaseUrl: string, retentionMs: number) => async (): Promise<OpenedWork> => {
  const platform = await openPlatform(loadDispatcherConfig({ DATABASE_URL: databaseUrl, SECRET_ENCRYPTION_KEYS: TEST_SECRET_KEYS_TEXT }));
  // The retention the dispatcher's sweep runs: the one place the benchmark forgets Platter's history.
  const run = () => platform.runPromise(HistoryPartitions.use((h) => h.forgetExpired(WEBHOOK_HISTORY, retentionMs, HISTORY_BATCH)));
  return { run: async () => void (await run()), close: () => platform.dispose() };
};

const platterHistoryRows = async (databaseUrl: string): Promise<number> => {
  const meter = await CostMeter.open(databaseUrl);
  try {
    return await meter.count(
      "select (select count(*) from webhook_messages) + (select count(*) from webhook_deliveries) + (select count(*) from webhook_attempts) as n",
    );
  } finally {
    await meter.close();
  }
};

/**
 * pg-boss's own deletion of completed jobs: its maintenance (`supervise`, which the worker's
 * instance runs every `superviseIntervalSeconds`) run once, by an instance of its own.
 */
const pgBossMaintenance = (databaseUrl: string) => async (): Promise<OpenedWork> => {
  const boss = new PgBoss({ connectionString: databaseUrl, max: 2, supervise: false, schedule: false, maintenanceIntervalSeconds: 1 });
  boss.on("error", (error) => console.error("pg-boss:", error.message));
  await boss.start();
  return { run: () => boss.supervise(QUEUE), close: () => boss.stop({ graceful: false, wait: true }) };
};

/** A backdated history: `messages` messages two days old, each with its delivery (succeeded) and its attempt, in one statement. */
const insertBackdatedHistory = async (databaseUrl: string, organizationId: number, endpointId: number, messages: number): Promise<void> => {
  const meter = await CostMeter.open(databaseUrl);
  try {
    await meter.run(coverPartitionSql(WEBHOOK_HISTORY, new Date(Date.now() - 3 * 86_400_000), 86_400_000));
    await meter.run(
      `with m as (
         insert into webhook_messages (organization_id, type, payload, created_at)
         select $1::bigint, 'client.created', jsonb_build_object('version', 1, 'data', jsonb_build_object('id', n, 'name', 'Client ' || n,
             'email', null, 'phone', null, 'company', null, 'created_at', '2026-11-23T08:00:00.000Z')),
           now() - interval '2 days' + n * interval '1 millisecond'
         from generate_series(1, $3::int) n
         returning id, organization_id, created_at
       ), d as (
         insert into webhook_deliveries (organization_id, endpoint_id, message_id, status, attempts, next_attempt_at, created_at, completed_at)
         select m.organization_id, $2::bigint, m.id, 'succeeded', 1, m.created_at, m.created_at, m.created_at + interval '20 milliseconds'
         from m returning id, organization_id, created_at
       )
       insert into webhook_attempts (organization_id, delivery_id, delivery_created_at, attempt, started_at, duration_ms, status_code)
       select d.organization_id, d.id, d.created_at, 1, d.created_at, 20, 200 from d`,
      [organizationId, endpointId, messages],
    );
    for (const table of ["webhook_messages", "webhook_deliveries", "webhook_attempts"]) await meter.run(`vacuum analyze ${table}`);
  } finally {
    await meter.close();
  }
};

/** Runs `lifecycle`: Platter's life of a delivery, pg-boss's, then the backdated history forgotten. */
export const measureLifecycle = async (run: LifecycleRun, settings: LifecycleSettings): Promise<LifecycleResult> => {
  const { bench, adminUrl, log } = run;
  const count = (n: number) => n.toLocaleString("en-US");
  const rows: LifecycleRow[] = [];

  await withPlatterDatabase(adminUrl, bench.receiver.url, async (db, organizationId, secret) => {
    await enqueueBacklog(db, organizationId, settings.deliveries);
    bench.receiver.reset(secret);
    log(`lifecycle: dispatcher ×1 sends ${count(settings.deliveries)}…`);
    const sent = await drainBacklog(bench, "lifecycle: Platter dispatcher ×1", settings.deliveries,
      { databaseUrl: db.url, adminUrl, queue: PLATTER_QUEUE }, async () => [await startDispatcherProcess(db.url, settings.concurrency)]);
    log(`  ${(await deliveryRecord(db, settings.deliveries)).line}`);
    // History goes by whole partitions (a day each here): the sent history is moved two days back first, unmeasured, so
    // the retention finds its partition expired, as it finds a day of history once its retention has passed.
    await backdateHistory(db.url, "true", [], "m.created_at - interval '2 days'");
    log("lifecycle: the retention forgets them…");
    const forget = await measureHere(bench, adminUrl, db.url, retentionOnOwnPlatform(db.url, 3600_000));
    rows.push({
      system: "Platter",
      deliveries: settings.deliveries,
      send: { seconds: sent.settleSeconds, workerCpuSeconds: sent.workerCpuSeconds, postgresCpuSeconds: sent.postgresCpuSeconds, database: sent.database },
      forget,
      historyLeft: await platterHistoryRows(db.url),
      historyTables: PLATTER_HISTORY,
    });
  });

  {
    const secret = generateSigningSecret();
    const db = await createTestDatabase(adminUrl);
    // Completed jobs may go a second after their completion (a job takes its queue's setting when it is inserted).
    const boss = await openPgBoss(db.url, { deleteAfterSeconds: 1 });
    try {
      await enqueueJobs(boss, bench.receiver.url, settings.deliveries);
      bench.receiver.reset(secret);
      log(`lifecycle: pg-boss worker sends ${count(settings.deliveries)}…`);
      const queue: QueueSpec = {
        table: "pgboss.job",
        unsettledSql: `select count(*)::int as n from pgboss.job where name = '${QUEUE}' and state <> 'completed'`,
      };
      const sent = await drainBacklog(bench, "lifecycle: pg-boss", settings.deliveries, { databaseUrl: db.url, adminUrl, queue },
        async () => [startPgBossWorker(db.url, { ...run.pgBoss, secret, signatureHeader: run.signatureHeader })]);
      log("lifecycle: pg-boss's maintenance deletes the completed jobs…");
      await sleep(2_000); // past deleteAfterSeconds, and past the last maintenance's interval
      const forget = await measureHere(bench, adminUrl, db.url, pgBossMaintenance(db.url));
      const [left] = (await boss.getDb().executeSql("select count(*)::int as n from pgboss.job where name = $1", [QUEUE])).rows as { n: number }[];
      rows.push({
        system: `pg-boss 11 (batchSize ${run.pgBoss.batchSize})`,
        deliveries: settings.deliveries,
        send: { seconds: sent.settleSeconds, workerCpuSeconds: sent.workerCpuSeconds, postgresCpuSeconds: sent.postgresCpuSeconds, database: sent.database },
        forget,
        historyLeft: left!.n,
        historyTables: PG_BOSS_HISTORY,
      });
    } finally {
      await boss.stop({ graceful: false, wait: true });
      await db.dispose();
    }
  }

  const forget = await (async (): Promise<ForgetRun> => {
    const db = await createTestDatabase(adminUrl);
    try {
      const org = await createOrganization(db, "Backdated Catering", "EUR");
      const endpoint = await db.run(WebhookEndpointRepository.use((e) => e.add(org.scope, bench.receiver.url, ["client.created"], generateSigningSecret())));
      log(`lifecycle: a backdated history of ${count(settings.forgetMessages)} messages…`);
      await insertBackdatedHistory(db.url, org.id, endpoint.id, settings.forgetMessages);
      const [before] = await sql<{ n: string }>(db, "select count(*) as n from webhook_messages");
      if (Number(before!.n) !== settings.forgetMessages) throw new Error(`backdated ${before!.n} messages, not ${settings.forgetMessages}`);
      log("lifecycle: the retention (1 day) forgets it…");
      const cost = await measureHere(bench, adminUrl, db.url, retentionOnOwnPlatform(db.url, 24 * 3600_000));
      return { messages: settings.forgetMessages, cost, historyLeft: await platterHistoryRows(db.url) };
    } finally {
      await db.dispose();
    }
  })();
  return { rows, forget };
};

/** Rows written (inserts + updates + deletes) in the tables `history` matches. */
export const historyWrites = (cost: DatabaseCost, history: RegExp) => {
  const tables = cost.tables.filter((t) => history.test(t.table));
  const sum = (field: "inserts" | "updates" | "hotUpdates" | "deletes") => tables.reduce((n, t) => n + t[field], 0);
  return { inserts: sum("inserts"), updates: sum("updates"), hotUpdates: sum("hotUpdates"), deletes: sum("deletes") };
};

/** The run's result checked: it is a failure of the run (not a target) when a system forgot less than everything. */
export const forgottenEverything = (result: LifecycleResult): string[] => [
  ...result.rows.filter((r) => r.historyLeft > 0).map((r) => `${r.system}: ${r.historyLeft} history rows left after forgetting`),
  ...(result.forget.historyLeft > 0 ? [`backdated history: ${result.forget.historyLeft} rows left after forgetting`] : []),
];
