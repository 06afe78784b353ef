import { cpus, totalmem } from "node:os";
import { measureThrottle, type ThrottleSettings, throttleSetupOf } from "./endpoint-throttle.ts";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { loadDispatcherConfig } from "@platter/dispatcher";
import { openPlatform, WebhookEndpointRepository } from "@platter/persistence";
import { generateSigningSecret } from "@platter/domain";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import { createOrganization, createTestDatabase, startTestPostgres, TEST_SECRET_KEYS_TEXT, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { WebhookDispatcher } from "@platter/webhooks";
import pg from "pg";
import { type Bench, drainBacklog, measureLatency, type QueueSpec, sendRaw } from "./measurements.ts";
import { enqueueJobs, openPgBoss, pgBossSingleJobs, QUEUE } from "./pg-boss-queue.ts";
import { deliveryRecord, enqueueBacklog, outboxSingleEvents, PLATTER_QUEUE, withPlatterDatabase } from "./platter-outbox.ts";
import { parentPid } from "./process-cpu.ts";
import { startOtlpSink } from "./otlp-sink.ts";
import { startHoldingReceiver, startReceiver } from "./receiver.ts";
import {
  consoleReport, type IsolationResults, ISOLATION_SCENARIOS, type LatencyResult, type StoreProfile, type ThroughputResult,
  type WebhookBenchReport, writeSection,
} from "./report.ts";
import { timedStore } from "./store-timings.ts";
import { BESIDE, findingsOf, RAW_SENDER, isolationTargetsOf, targetsOf } from "./targets.ts";
import { forgottenEverything, measureLifecycle } from "./lifecycle.ts";
import { lifecycleConsole, lifecycleTargets, writeLifecycleSection } from "./lifecycle-report.ts";
import { writeFile } from "node:fs/promises";
import { readDuration } from "@platter/ops";
import { runSoak } from "./soak.ts";
import { measureStatementCosts, type StatementCost, statementCostsConsole } from "./statement-costs.ts";
import { SOAK_REPORTED_MS, soakConsole, writeSoakSection } from "./soak-report.ts";
import {
  type IsolationRun, isolationSetupOf, measureBusyOrigin, measureDistinctOrigins, measureFanOut, measureManyEndpoints, measureTenants,
} from "./tenant-isolation.ts";
import { type PgBossWorkerSettings, startDispatcherProcess, startPgBossWorker, startRawSender, wholeDispatcher } from "./worker-processes.ts";
import { wholeNumberSetting } from "@platter/bench/bench-settings";

/**
 * `npm run bench:webhooks`: what a webhook delivery costs, then throughput and latency. In a durable
 * PostgreSQL of its own (fsync, synchronous_commit and full_page_writes on), drains a backlog of
 * webhook messages through one and then two dispatcher processes into a local receiver, and the
 * same backlog through a pg-boss 11 worker as the reference, measuring per delivery the CPU of the
 * worker(s) and of PostgreSQL, the rows written and the WAL; times single events at a low rate;
 * then the tenant-isolation scenarios (tenant-isolation.ts); prints the tables and writes the
 * `## Webhook delivery` section of docs/performance.md (each scenario's part only when it ran).
 *
 * Quick runs: BENCH_WEBHOOK_EVENTS (backlog size), BENCH_WEBHOOK_CONCURRENCY (dispatcher
 * DISPATCHER_CONCURRENCY), BENCH_WEBHOOK_LATENCY_RATE (events/s), BENCH_WEBHOOK_LATENCY_S,
 * BENCH_PGBOSS_WORKERS, BENCH_PGBOSS_BATCH (comma list, one backlog run each), BENCH_WEBHOOK_TIMEOUT_S (per phase),
 * BENCH_WEBHOOK_SCENARIOS (comma list of dispatcher, dispatchers, pg-boss, raw-sender, fairness, profile, tenants, origin,
 * origins, many-endpoints, fan-out, throttle, lifecycle; default all of those; and statements, run only when named),
 * BENCH_FAIRNESS_BACKLOG (deliveries queued at the troubled endpoint, default 2,000),
 * tenants: BENCH_TENANTS_ENDPOINTS (24), BENCH_TENANTS_QUEUED_PER_ENDPOINT (200), BENCH_TENANTS_HOLD_S (12),
 * BENCH_TENANTS_LATENCY_S (30: over two of the slow endpoints' holds);
 * origin: BENCH_ORIGIN_ENDPOINTS (64), BENCH_ORIGIN_QUEUED_PER_ENDPOINT (60);
 * origins: BENCH_ORIGINS_ENDPOINTS (64), BENCH_ORIGINS_DISPATCHERS (comma list, 1,2,4), BENCH_ORIGINS_SECONDS (12);
 * many-endpoints: BENCH_MANY_ENDPOINTS (comma list, 100,10000), BENCH_MANY_ENDPOINTS_PENDING (per endpoint, 1),
 * BENCH_MANY_ENDPOINTS_CLAIMS (50); fan-out: BENCH_FAN_OUT_CREATES (200);
 * throttle: BENCH_THROTTLE_PER_SECOND (5), BENCH_THROTTLE_QUEUED (1000, at each of two endpoints), BENCH_THROTTLE_WINDOW_S (30),
 * BENCH_THROTTLE_DISPATCHERS (2);
 * statements (statement-costs.ts, printed only): BENCH_WEBHOOK_EVENTS deliveries drained through the claim and the recording
 * statement alone, for each of BENCH_STATEMENT_CLAIM_SIZES (comma list, 16,64,256) with BENCH_STATEMENT_RECORD_BATCH (128) results a batch;
 * BENCH_PLATTER_SETUP_SQL (SQL run in each fresh Platter database before its organization is made: a schema experiment);
 * BENCH_DISPATCHER_CPU_PROF (a directory: each dispatcher process writes a V8 CPU profile there, `node --cpu-prof`);
 * lifecycle (lifecycle.ts): BENCH_WEBHOOK_EVENTS deliveries sent and forgotten by each system, and a backdated history of
 * BENCH_WEBHOOK_FORGET_MESSAGES (1,000,000) messages forgotten;
 * BENCH_WEBHOOK_TRACES=1: the dispatcher scenario drains its backlog a second time with the dispatcher exporting traces (on / off);
 * BENCH_REPORT (where to write the report; `-` writes nothing); BENCH_RESULTS_JSON (a file for the results as JSON too).
 *
 * BENCH_WEBHOOK_SOAK (a duration, e.g. 60m) runs the soak instead (soak.ts): BENCH_WEBHOOK_SOAK_RATE (creates/s, 100),
 * BENCH_WEBHOOK_SOAK_RETENTION (3m), BENCH_WEBHOOK_SOAK_SWEEP (1m); it writes its section only when it ran 30 minutes or more.
 */

const setting = (name: string, fallback: number): number => wholeNumberSetting(name, fallback, 1);
/** A comma list of positive whole numbers from `name`, or `fallback`. */
const settingList = (name: string, fallback: string): number[] =>
  (process.env[name] || fallback).split(",").map((item) => {
    const value = Number(item.trim());
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be whole numbers like ${fallback}, got "${item}"`);
    return value;
  });

const SIGNATURE_HEADER = "x-platter-signature";
const settings = {
  events: setting("BENCH_WEBHOOK_EVENTS", 100_000),
  concurrency: setting("BENCH_WEBHOOK_CONCURRENCY", 256),
  latencyRate: setting("BENCH_WEBHOOK_LATENCY_RATE", 50),
  latencySeconds: setting("BENCH_WEBHOOK_LATENCY_S", 10),
  pgBossWorkers: setting("BENCH_PGBOSS_WORKERS", 4),
  pgBossBatches: settingList("BENCH_PGBOSS_BATCH", "250,1000"),
  timeoutMs: setting("BENCH_WEBHOOK_TIMEOUT_S", 900) * 1000,
};
/** The first scenarios: cost, throughput and latency of one endpoint, against pg-boss; fairness; the profile. */
const MAIN_SCENARIOS = ["dispatcher", "dispatchers", "pg-boss", "raw-sender", "fairness", "profile"];
/** Scenarios run only when named (a diagnosis, not a figure of the report). */
const ON_REQUEST = ["statements"];
const SCENARIOS = [...MAIN_SCENARIOS, ...ISOLATION_SCENARIOS.map((s) => s.name), "lifecycle", ...ON_REQUEST];
const scenarios = new Set((process.env["BENCH_WEBHOOK_SCENARIOS"] || SCENARIOS.filter((s) => !ON_REQUEST.includes(s)).join(","))
  .split(",").map((s) => s.trim()));
for (const scenario of scenarios) {
  if (!SCENARIOS.includes(scenario)) throw new Error(`BENCH_WEBHOOK_SCENARIOS: unknown scenario "${scenario}" (known: ${SCENARIOS.join(", ")})`);
}
const fairnessBacklog = setting("BENCH_FAIRNESS_BACKLOG", 2_000);
/** `lifecycle`'s backdated history (issue 32: a million messages). */
const forgetMessages = setting("BENCH_WEBHOOK_FORGET_MESSAGES", 1_000_000);
/** Where to write the run's results as JSON too (the test of the benchmark reads them); unset: nowhere. */
const resultsTarget = process.env["BENCH_RESULTS_JSON"];
/** The tenant-isolation scenarios' sizes; the busy endpoints answer in 400 ms, as issue 16 measured them. */
const BUSY_HOLD_MS = 400;
const isolationSettings = {
  tenants: {
    endpoints: setting("BENCH_TENANTS_ENDPOINTS", 24),
    perEndpoint: setting("BENCH_TENANTS_QUEUED_PER_ENDPOINT", 200),
    holdMs: setting("BENCH_TENANTS_HOLD_S", 12) * 1000,
    latencySeconds: setting("BENCH_TENANTS_LATENCY_S", 30),
  },
  origin: {
    endpoints: setting("BENCH_ORIGIN_ENDPOINTS", 64),
    perEndpoint: setting("BENCH_ORIGIN_QUEUED_PER_ENDPOINT", 60),
    holdMs: BUSY_HOLD_MS,
    originConnections: 64,
  },
  origins: {
    endpoints: setting("BENCH_ORIGINS_ENDPOINTS", 64),
    holdMs: BUSY_HOLD_MS,
    dispatchers: settingList("BENCH_ORIGINS_DISPATCHERS", "1,2,4"),
    seconds: setting("BENCH_ORIGINS_SECONDS", 12),
  },
  manyEndpoints: {
    endpoints: settingList("BENCH_MANY_ENDPOINTS", "100,10000"),
    perEndpoint: setting("BENCH_MANY_ENDPOINTS_PENDING", 1),
    claims: setting("BENCH_MANY_ENDPOINTS_CLAIMS", 50),
    claimSize: 64,
  },
  fanOut: { creates: setting("BENCH_FAN_OUT_CREATES", 200) },
};
/** `throttle`'s sizes: 1,000 queued at an endpoint throttled to 5/s, two dispatchers (issue 31). */
const throttleSettings: ThrottleSettings = {
  perSecond: setting("BENCH_THROTTLE_PER_SECOND", 5),
  queued: setting("BENCH_THROTTLE_QUEUED", 1_000),
  windowSeconds: setting("BENCH_THROTTLE_WINDOW_S", 30),
  dispatchers: setting("BENCH_THROTTLE_DISPATCHERS", 2),
};
if (isolationSettings.tenants.holdMs >= loadDispatcherConfig({}).timeoutMs) {
  throw new Error("BENCH_TENANTS_HOLD_S must be under the dispatcher's WEBHOOK_TIMEOUT (15 s): the slow endpoints answer, slowly");
}
/** The command that produced this run's figures: the BENCH_* variables it ran with (but where it writes), and the script. */
const command = [
  ...Object.entries(process.env).filter(([name, value]) => name.startsWith("BENCH_") && name !== "BENCH_REPORT" && value)
    .sort(([a], [b]) => a.localeCompare(b)).map(([name, value]) => `${name}=${value}`),
  "npm run bench:webhooks",
].join(" ");
const reportTarget = process.env["BENCH_REPORT"] || resolve(import.meta.dirname, "../../../docs/performance.md");
if (settings.concurrency % settings.pgBossWorkers !== 0) throw new Error("BENCH_WEBHOOK_CONCURRENCY must be a multiple of BENCH_PGBOSS_WORKERS");

/** One endpoint of one organization with all of a dispatcher's slots: its cap, its organization's, its origin's connections. */
const whole = wholeDispatcher(settings.concurrency);

const log = (line: string) => console.log(line);
const count = (n: number) => n.toLocaleString("en-US");

/** The pg-boss queue as a drain watches it (the Platter one is `PLATTER_QUEUE`). */
const PG_BOSS_QUEUE: QueueSpec = {
  table: "pgboss.job",
  unsettledSql: `select count(*)::int as n from pgboss.job where name = '${QUEUE}' and state <> 'completed'`,
};

/**
 * Fair delivery: another organization's commit → receiver latency at the low-load rate while one
 * organization's endpoint, with `fairnessBacklog` deliveries queued, holds every request 8 s (under
 * the timeout), and then while it lets every request time out (2 s). The dispatcher runs with its
 * production cap per endpoint (16).
 */
const measureFairness = async (bench: Bench, adminUrl: string, latency: LatencyResult[]): Promise<void> => {
  const troubles: ReadonlyArray<{ label: string; holdMs: number; env: Readonly<Record<string, string>> }> = [
    { label: `${BESIDE} holding every request 8 s (${count(fairnessBacklog)} queued)`, holdMs: 8_000, env: {} },
    { label: `${BESIDE} timing out on every request (2 s, ${count(fairnessBacklog)} queued)`, holdMs: 600_000, env: { WEBHOOK_TIMEOUT: "2s" } },
  ];
  for (const trouble of troubles) {
    const troubled = await startHoldingReceiver(trouble.holdMs);
    try {
      await withPlatterDatabase(adminUrl, bench.receiver.url, async (db, organizationId, secret) => {
        const other = await createOrganization(db, "Troubled Catering", "EUR");
        await db.run(WebhookEndpointRepository.use((e) => e.add(other.scope, troubled.url, ["client.created"], generateSigningSecret())));
        await enqueueBacklog(db, other.id, fairnessBacklog);
        bench.receiver.reset(secret);
        const dispatcher = await startDispatcherProcess(db.url, settings.concurrency, { endpointCap: "production", env: trouble.env });
        try {
          await dispatcher.ready;
          await sleep(1000); // the troubled endpoint at its cap
          log(`fairness: latency ${trouble.label}…`);
          latency.push(await measureLatency(bench, `Platter dispatcher ×1 ${trouble.label}`, settings.latencyRate, settings.latencySeconds,
            outboxSingleEvents(db, organizationId)));
        } finally {
          await dispatcher.stop();
        }
      });
    } finally {
      await troubled.close();
    }
  }
};

const pgBossSettings = (secret: string, batchSize: number): PgBossWorkerSettings => ({
  queue: QUEUE,
  workers: settings.pgBossWorkers,
  batchSize,
  postsPerWorker: settings.concurrency / settings.pgBossWorkers,
  pollingIntervalSeconds: 0.5,
  secret,
  signatureHeader: SIGNATURE_HEADER,
});

/**
 * The dispatcher loop in this process over a store that times every call: where the time of a
 * backlog goes. Same configuration as the dispatcher process, minus the ops port and the listener.
 */
const profileDispatcher = async (bench: Bench, db: TestDatabase, organizationId: number, secret: string): Promise<StoreProfile> => {
  await enqueueBacklog(db, organizationId, settings.events);
  bench.receiver.reset(secret);
  const config = loadDispatcherConfig({
    DATABASE_URL: db.url,
    SECRET_ENCRYPTION_KEYS: TEST_SECRET_KEYS_TEXT,
    DISPATCHER_CONCURRENCY: String(settings.concurrency),
    ...whole, // one endpoint of one organization: the same attempts in flight as the processes
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
  });
  const platform = await openPlatform(config);
  const timed = timedStore(await platform.runPromise(DeliveryQueue.use(Effect.succeed)));
  const dispatcher = new WebhookDispatcher(timed.store, config, { failedLoop: (error) => console.error("profile:", error) });
  const began = performance.now();
  dispatcher.start();
  try {
    await bench.receiver.waitFor(settings.events, bench.timeoutMs);
  } finally {
    await dispatcher.stop();
    await platform.dispose();
  }
  return { deliveries: settings.events, seconds: (performance.now() - began) / 1000, timings: timed.timings() };
};

const run = async (): Promise<void> => {
  log(`Platter webhook benchmark (${[...scenarios].join(", ")}): ${count(settings.events)} deliveries per backlog, ` +
    `dispatcher concurrency ${settings.concurrency}, latency ${settings.latencyRate}/s for ${settings.latencySeconds} s`);
  // The headline figures must pay for durability as production does: no test-server shortcuts.
  const postgres = await startTestPostgres({ durable: true });
  const receiver = await startReceiver(SIGNATURE_HEADER);
  const throughput: ThroughputResult[] = [];
  const latency: LatencyResult[] = [];
  let profile: StoreProfile | undefined;
  try {
    const admin = new pg.Client({ connectionString: postgres.adminUrl });
    await admin.connect();
    const { rows: [server] } = await admin.query<{
      version: string; pid: number; fsync: string; synchronous_commit: string; full_page_writes: string; wal_sync_method: string;
    }>(
      `select current_setting('server_version') as version, pg_backend_pid() as pid, current_setting('fsync') as fsync,
         current_setting('synchronous_commit') as synchronous_commit, current_setting('full_page_writes') as full_page_writes,
         current_setting('wal_sync_method') as wal_sync_method`,
    );
    const bench: Bench = { receiver, postmasterPid: parentPid(server!.pid), timeoutMs: settings.timeoutMs };
    await admin.end();
    const durability = `fsync ${server!.fsync}, synchronous_commit ${server!.synchronous_commit}, ` +
      `full_page_writes ${server!.full_page_writes} (wal_sync_method ${server!.wal_sync_method})`;
    const durable = server!.fsync === "on" && server!.synchronous_commit === "on" && server!.full_page_writes === "on";
    const description = `PostgreSQL ${server!.version}, ${postgres.kind}, ` +
      (durable ? `durable for every figure: ${durability}` : `NOT durable, so not comparable with a production server: ${durability}`);
    log(`${description}; receiver at ${receiver.url}`);
    const drainOn = (databaseUrl: string, queue: QueueSpec) => ({ databaseUrl, adminUrl: postgres.adminUrl, queue });

    if (scenarios.has("dispatcher")) {
      await withPlatterDatabase(postgres.adminUrl, receiver.url, async (db, organizationId, secret) => {
        receiver.reset(secret);
        const dispatcher = await startDispatcherProcess(db.url, settings.concurrency);
        try {
          await dispatcher.ready;
          await sleep(1000); // idle, listening
          log("dispatcher ×1: low-load latency…");
          latency.push(await measureLatency(bench, "Platter dispatcher ×1", settings.latencyRate, settings.latencySeconds,
            outboxSingleEvents(db, organizationId)));
        } finally {
          await dispatcher.stop();
        }
      });
      await withPlatterDatabase(postgres.adminUrl, receiver.url, async (db, organizationId, secret) => {
        await enqueueBacklog(db, organizationId, settings.events);
        receiver.reset(secret);
        log(`dispatcher ×1: draining ${count(settings.events)}…`);
        const result = await drainBacklog(bench, `Platter dispatcher ×1 (concurrency ${settings.concurrency})`, settings.events,
          drainOn(db.url, PLATTER_QUEUE), async () => [await startDispatcherProcess(db.url, settings.concurrency)]);
        const record = await deliveryRecord(db, settings.events);
        throughput.push({ ...result, attemptsRecorded: record.attempts });
        log(`  ${record.line}`);
      });
      // BENCH_WEBHOOK_TRACES=1: the same backlog again, the dispatcher exporting every span to a sink on 127.0.0.1 (tracing on / off).
      if (process.env["BENCH_WEBHOOK_TRACES"] === "1") {
        const sink = await startOtlpSink();
        try {
          await withPlatterDatabase(postgres.adminUrl, receiver.url, async (db, organizationId, secret) => {
            await enqueueBacklog(db, organizationId, settings.events);
            receiver.reset(secret);
            log(`dispatcher ×1, tracing on: draining ${count(settings.events)}…`);
            const result = await drainBacklog(bench, `Platter dispatcher ×1 (concurrency ${settings.concurrency}, tracing on)`, settings.events,
              drainOn(db.url, PLATTER_QUEUE),
              async () => [await startDispatcherProcess(db.url, settings.concurrency, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint } })]);
            const record = await deliveryRecord(db, settings.events);
            throughput.push({ ...result, attemptsRecorded: record.attempts });
            log(`  ${record.line}; ${sink.stats().exports} OTLP exports, ${(sink.stats().bytes / 1e6).toFixed(1)} MB`);
          });
        } finally {
          await sink.close();
        }
      }
    }

    if (scenarios.has("dispatchers")) {
      await withPlatterDatabase(postgres.adminUrl, receiver.url, async (db, organizationId, secret) => {
        await enqueueBacklog(db, organizationId, settings.events);
        receiver.reset(secret);
        log(`dispatcher ×2: draining ${count(settings.events)}…`);
        const result = await drainBacklog(bench,
          `Platter dispatcher ×2 (concurrency ${settings.concurrency} each, endpoint cap ${settings.concurrency})`, settings.events,
          drainOn(db.url, PLATTER_QUEUE),
          () => Promise.all([startDispatcherProcess(db.url, settings.concurrency), startDispatcherProcess(db.url, settings.concurrency)]));
        const record = await deliveryRecord(db, settings.events);
        throughput.push({ ...result, attemptsRecorded: record.attempts });
        log(`  ${record.line}`);
      });
    }

    if (scenarios.has("statements")) {
      const costs: StatementCost[] = [];
      for (const size of settingList("BENCH_STATEMENT_CLAIM_SIZES", "16,64,256")) {
        log(`statements: ${count(settings.events)} deliveries, claims of ${size}…`);
        costs.push(await measureStatementCosts(postgres.adminUrl, settings.events, size, setting("BENCH_STATEMENT_RECORD_BATCH", 128)));
      }
      log(statementCostsConsole(costs));
    }

    if (scenarios.has("pg-boss")) {
      const secret = generateSigningSecret();
      // Latency depends on the polling interval, not the batch size: measured once, with the largest batch.
      const phases = [
        { kind: "latency" as const, reference: pgBossSettings(secret, Math.max(...settings.pgBossBatches)) },
        ...settings.pgBossBatches.map((batchSize) => ({ kind: "backlog" as const, reference: pgBossSettings(secret, batchSize) })),
      ];
      for (const { kind, reference } of phases) {
        const name = `pg-boss 11 worker (${reference.workers} × work, batchSize ${reference.batchSize}, ${settings.concurrency} POSTs in flight)`;
        const db = await createTestDatabase(postgres.adminUrl);
        const boss = await openPgBoss(db.url);
        try {
          if (kind === "latency") {
            receiver.reset(secret);
            const worker = startPgBossWorker(db.url, reference);
            try {
              await worker.ready;
              await sleep(1000);
              log("pg-boss: low-load latency…");
              latency.push(await measureLatency(bench, name, settings.latencyRate, settings.latencySeconds, pgBossSingleJobs(boss, receiver.url)));
            } finally {
              await worker.stop();
            }
          } else {
            await enqueueJobs(boss, receiver.url, settings.events);
            receiver.reset(secret);
            log(`pg-boss, batchSize ${reference.batchSize}: draining ${count(settings.events)}…`);
            throughput.push(await drainBacklog(bench, name, settings.events, drainOn(db.url, PG_BOSS_QUEUE),
              async () => [startPgBossWorker(db.url, reference)]));
          }
        } finally {
          await boss.stop({ graceful: false, wait: true });
          await db.dispose();
        }
      }
    }

    if (scenarios.has("raw-sender")) {
      const secret = generateSigningSecret();
      receiver.reset(secret);
      log(`raw sender: sending ${count(settings.events)}…`);
      throughput.push(await sendRaw(bench, `${RAW_SENDER} (undici, ${settings.concurrency} POSTs in flight, no queue)`, settings.events,
        () => startRawSender({ url: receiver.url, secret, signatureHeader: SIGNATURE_HEADER, deliveries: settings.events, concurrency: settings.concurrency })));
    }

    if (scenarios.has("fairness")) await measureFairness(bench, postgres.adminUrl, latency);

    if (scenarios.has("profile")) {
      log(`profile: one in-process dispatcher over a timed store, draining ${count(settings.events)}…`);
      profile = await withPlatterDatabase(postgres.adminUrl, receiver.url, (db, organizationId, secret) =>
        profileDispatcher(bench, db, organizationId, secret));
    }

    const isolation: { -readonly [K in keyof IsolationResults]: IsolationResults[K] } = {};
    const isolationRun: IsolationRun = {
      bench, adminUrl: postgres.adminUrl, concurrency: settings.concurrency, latencyRate: settings.latencyRate,
      latencySeconds: settings.latencySeconds, signatureHeader: SIGNATURE_HEADER, log,
    };
    if (scenarios.has("tenants")) isolation.tenants = await measureTenants(isolationRun, isolationSettings.tenants);
    if (scenarios.has("origin")) isolation.origin = await measureBusyOrigin(isolationRun, isolationSettings.origin);
    if (scenarios.has("origins")) isolation.origins = await measureDistinctOrigins(isolationRun, isolationSettings.origins);
    if (scenarios.has("many-endpoints")) isolation.manyEndpoints = await measureManyEndpoints(isolationRun, isolationSettings.manyEndpoints);
    if (scenarios.has("fan-out")) isolation.fanOut = await measureFanOut(isolationRun, isolationSettings.fanOut);
    if (scenarios.has("throttle")) isolation.throttle = await measureThrottle(isolationRun, throttleSettings);
    const { secret: _secret, signatureHeader: _header, ...pgBoss } = pgBossSettings("", Math.max(...settings.pgBossBatches));
    const lifecycle = scenarios.has("lifecycle")
      ? await measureLifecycle({ bench, adminUrl: postgres.adminUrl, signatureHeader: SIGNATURE_HEADER, pgBoss, log },
        { deliveries: settings.events, forgetMessages, concurrency: settings.concurrency })
      : undefined;

    const report = buildReport(description, throughput, latency, profile, isolation);
    log("");
    log(consoleReport(report));
    if (lifecycle !== undefined) log(`\n${lifecycleConsole(lifecycle)}`);
    if (resultsTarget !== undefined && resultsTarget !== "") {
      await writeFile(resultsTarget, JSON.stringify({ throughput, latency, isolation, lifecycle }, (_, v: unknown) => (v instanceof RegExp ? v.source : v)));
    }
    if (reportTarget !== "-") {
      if (report.ranMain || Object.keys(isolation).length > 0) {
        await writeSection(reportTarget, report);
        log(`\nwrote the webhook section of ${reportTarget}`);
      }
      if (lifecycle !== undefined) {
        await writeLifecycleSection(reportTarget, { command, date: report.date, machine: report.machine, postgres: description }, lifecycle);
        log(`wrote the webhooks-lifecycle section of ${reportTarget}`);
      }
    }
    const failed = [...report.targets, ...Object.values(report.isolationTargets).flat(), ...(lifecycle === undefined ? [] : lifecycleTargets(lifecycle))];
    if (failed.some((t) => !t.pass)) process.exitCode = 1;
    if (lifecycle !== undefined && forgottenEverything(lifecycle).length > 0) throw new Error(forgottenEverything(lifecycle).join("; "));
  } finally {
    await receiver.close();
    await postgres.stop();
  }
};

/** The machine the run measured on. */
const machineLine = () =>
  `${cpus().length} cores (${cpus()[0]?.model.trim() ?? "unknown CPU"}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM, ` +
  `Node ${process.versions.node}; workers, PostgreSQL and the receiver all on this one machine`;

const buildReport = (
  postgres: string,
  throughput: ThroughputResult[],
  latency: LatencyResult[],
  profile: StoreProfile | undefined,
  isolation: IsolationResults,
): WebhookBenchReport => ({
  date: new Date().toISOString().slice(0, 10),
  machine: machineLine(),
  postgres,
  command,
  ranMain: MAIN_SCENARIOS.some((s) => scenarios.has(s)),
  setup: [
    "A throwaway PostgreSQL (`startTestPostgres({ durable: true })`: the embedded server without the test server's " +
      "fsync=off, synchronous_commit=off and full_page_writes=off, so every commit is flushed to disk as in production) " +
      "and, per scenario, a fresh migrated database (`createTestDatabase`) with one organization and one webhook endpoint " +
      "subscribed to `client.created`, pointing at the receiver.",
    "The receiver is node:http on 127.0.0.1 (keep-alive) in the benchmark process; it answers 200 at once, notes " +
      "`Date.now()` at each envelope id's first arrival, and checks every signature.",
    `Backlog: ${count(settings.events)} \`client.created\` messages (payload version 1 of a created client, \`{"id":n,"name":"Client n",…}\`), ` +
      "each with its delivery to the endpoint, committed in one statement before the worker starts, as the API records them " +
      "(message and deliveries in one transaction); pg-boss gets the same number of jobs carrying the same envelope bytes.",
    "Each drain: once the statistics of the enqueueing are in (PostgreSQL sends an idle backend's within 10 s), the server " +
      "is checkpointed (so every drain starts alike: its first change of a page writes the whole page to the WAL) and the " +
      "tables' row counters and the WAL position are read; the worker process(es) then start with the queue table " +
      "(`webhook_deliveries`, `pgboss.job`) locked by the benchmark, so each blocks at its first look at the queue; once " +
      "all wait, the CPU baseline is taken and the lock released. CPU (from /proc: the worker process(es); every process " +
      "of the PostgreSQL server, background ones included) runs from the release until the receiver has seen every " +
      "envelope and the database shows every result written. Row writes (n_tup_ins + n_tup_upd + n_tup_del of every " +
      "table of the database, `pg_stat_user_tables`) and WAL (`pg_current_wal_insert_lsn`; nothing else runs on the " +
      "server meanwhile) are read again once the workers have stopped and their backends have exited (an exiting backend " +
      "sends its statistics). Enqueueing, process start-up and shutdown are outside the CPU figures.",
    `Dispatcher: \`apps/dispatcher/src/main.ts\` as its own process (production code and config), ` +
      `DISPATCHER_CONCURRENCY=${settings.concurrency}, WEBHOOK_ENDPOINT_CONCURRENCY=${settings.concurrency}, WEBHOOK_ORGANIZATION_CONCURRENCY=${settings.concurrency} ` +
      `and WEBHOOK_ORIGIN_CONNECTIONS=${whole.WEBHOOK_ORIGIN_CONNECTIONS} (one endpoint of one organization, whose share of its origin's connections is then ` +
      `${settings.concurrency}: so ${settings.concurrency} attempts in flight, as pg-boss), DATABASE_POOL_SIZE default (10), WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, ` +
      "LOG_LEVEL=warn. Each delivery is claimed under a lease, POSTed, and its result recorded: an attempt row (the history " +
      "kept per try) and the delivery's update. Two dispatchers drain the same backlog size in a fresh database; they " +
      `share the endpoint's cap, so attempts in flight stay ${settings.concurrency}.`,
    `Reference: a pg-boss 11 worker process, same jobs (the same envelope bytes), same signature (HMAC-SHA256 in ` +
      `\`${SIGNATURE_HEADER}\`), same headers, undici keep-alive pool of ${settings.concurrency} connections (one per POST in flight, as the dispatcher): ${settings.pgBossWorkers} \`boss.work\` ` +
      `subscriptions with \`pollingIntervalSeconds\` 0.5 (pg-boss's minimum), each POSTing its batch ` +
      `${settings.concurrency / settings.pgBossWorkers} at a time (${settings.concurrency} in flight, as the dispatcher). ` +
      "A subscription waits out the polling interval after each batch, so its ceiling is workers × batchSize / 0.5 s " +
      `(${settings.pgBossBatches.map((b) => `${count((settings.pgBossWorkers * b) / 0.5)} jobs/s at batchSize ${b}`).join(", ")}); ` +
      "the targets are judged against the best pg-boss row for each figure. pg-boss keeps no attempt history (a job row " +
      "holds its last state). Jobs are enqueued with `boss.insert` in batches of 5,000; the tables are analyzed in both " +
      "systems before the drain.",
    `Raw sender: the floor, no queue and no database. The same number of bodies (the same bytes as pg-boss's jobs), made before ` +
      "the measurement, each signed per POST exactly as the dispatcher signs an attempt (`signedHeaders`: Standard Webhooks' " +
      `\`webhook-signature\` and \`${SIGNATURE_HEADER}\`) and POSTed by a minimal loop with undici over a keep-alive pool of ` +
      `${settings.concurrency} connections, ${settings.concurrency} in flight, to the same receiver; its process's CPU from /proc.`,
    `Fair delivery: the low-load latency measurement again, for one organization, while another organization's endpoint has ` +
      `${count(fairnessBacklog)} deliveries queued and holds every request 8 s (under the 15 s timeout), then while it lets every ` +
      "request time out (WEBHOOK_TIMEOUT=2s); one dispatcher with the production cap of 16 attempts in flight per endpoint.",
    `Profile: the same backlog drained by the dispatcher loop (\`WebhookDispatcher\`, configuration from \`loadDispatcherConfig\`, ` +
      "the same concurrency and endpoint cap) run inside the benchmark process over a store that times every call.",
    `Low-load latency: with the worker started and idle, single events are committed one per transaction at ` +
      `${settings.latencyRate}/s for ${settings.latencySeconds} s (message and delivery INSERT for the dispatcher, \`boss.send\` for pg-boss); ` +
      "latency is the receiver's arrival time minus the row's commit timestamp (`created_at` / `created_on`, read afterwards), same clock.",
  ],
  throughput,
  latency,
  targets: targetsOf(throughput, latency),
  profile,
  findings: findingsOf(throughput, profile),
  isolation,
  isolationSetup: {
    ...isolationSetupOf(settings.concurrency, settings.latencyRate, settings.latencySeconds, isolationSettings),
    throttle: throttleSetupOf(settings.concurrency, throttleSettings),
  },
  isolationTargets: isolationTargetsOf(isolation),
});

/** `BENCH_WEBHOOK_SOAK`: the soak instead of the scenarios (soak.ts). */
const soak = async (durationMs: number): Promise<void> => {
  const result = await runSoak({
    durationMs,
    rate: setting("BENCH_WEBHOOK_SOAK_RATE", 100),
    retentionMs: readDuration(process.env, "BENCH_WEBHOOK_SOAK_RETENTION", 3 * 60_000),
    sweepMs: readDuration(process.env, "BENCH_WEBHOOK_SOAK_SWEEP", 60_000),
    signatureHeader: SIGNATURE_HEADER,
    log,
  });
  log("");
  log(soakConsole(result));
  if (resultsTarget !== undefined && resultsTarget !== "") await writeFile(resultsTarget, JSON.stringify({ soak: result }));
  if (reportTarget !== "-" && durationMs >= SOAK_REPORTED_MS) {
    await writeSoakSection(reportTarget, { command, date: new Date().toISOString().slice(0, 10), machine: machineLine(), postgres: result.postgres }, result);
    log(`\nwrote the webhooks-soak section of ${reportTarget}`);
  } else log(`\n(a soak under ${SOAK_REPORTED_MS / 60_000} minutes only prints)`);
  if (result.targets.some((t) => !t.pass)) process.exitCode = 1;
};

const soakSetting = process.env["BENCH_WEBHOOK_SOAK"];
await (soakSetting === undefined || soakSetting === "" ? run() : soak(readDuration(process.env, "BENCH_WEBHOOK_SOAK", 0, 1_000)));
