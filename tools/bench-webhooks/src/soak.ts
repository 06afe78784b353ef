import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { generateSigningSecret } from "@platter/domain";
import { loadDispatcherConfig } from "@platter/dispatcher";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, startTestPostgres, type TestDatabase } from "@platter/testing";
import { Agent, request } from "undici";
import { CostMeter } from "./database-cost.ts";
import { startReceiver } from "./receiver.ts";
import { percentile, type TargetCheck } from "./report.ts";
import { startApiProcess, startDispatcherProcess, type WorkerProcess } from "./worker-processes.ts";

/**
 * The soak (issue 32, `BENCH_WEBHOOK_SOAK=60m`): the real API and dispatcher processes at a fixed
 * rate of creates over HTTP for a configured time, with a short retention, two organizations (one
 * endpoint answering 200, one answering 500 for good). Reports per interval (a minute, or an eighth
 * of a shorter run) the create and read latency of the requests answered in it, webhook latency, RSS of both processes, history size
 * and the time the retention's statements were seen running; and the targets as PASS/FAIL lines.
 * Bounded: it stops by itself at the duration; only 127.0.0.1; it signals only the processes it started.
 */

/** The soak's settings. */
export interface SoakSettings {
  readonly durationMs: number;
  /** Creates per second, split evenly between the two organizations; a read every `READ_EVERY` creates besides. */
  readonly rate: number;
  /** The dispatcher's WEBHOOK_RETENTION and WEBHOOK_RETENTION_SWEEP. */
  readonly retentionMs: number;
  readonly sweepMs: number;
  readonly signatureHeader: string;
  readonly log: (line: string) => void;
}

/** A read (`GET /v1/clients?limit=20`) after every this many creates. */
const READ_EVERY = 5;
/** How often the retention's statements are looked for in pg_stat_activity. */
const SWEEP_SAMPLE_MS = 250;
/** How long after the load stops the healthy endpoint's last deliveries may take to arrive. */
const DRAIN_MS = 60_000;
/** The statements that forget history: today's row deletes, and the partition drops or detaches that may replace them. */
const SWEEP_STATEMENT = "(query ilike '%delete from webhook_messages%' or query ilike '%drop table%' or query ilike '%detach partition%')";
/** The history tables, each measured with its partitions (`pg_partition_tree`, which is the table alone when it has none). */
const HISTORY_TABLES = ["webhook_messages", "webhook_deliveries", "webhook_attempts", "api_requests"] as const;

/** One request the load sent. */
interface Sample {
  /** Milliseconds since the load began, when its answer came (an interval shows the requests it answered). */
  readonly at: number;
  readonly ms: number;
  readonly status: number;
}

/** The history at one moment. */
export interface HistorySize {
  /** Rows per history table. */
  readonly rows: Readonly<Record<string, number>>;
  /** Bytes of the history tables (indexes and TOAST included). */
  readonly bytes: number;
  /** Messages of the healthy organization and of the failing one. */
  readonly healthyMessages: number;
  readonly failingMessages: number;
}

/** One interval of the soak. */
export interface SoakInterval {
  /** Seconds since the load began, at the interval's end. */
  readonly endSeconds: number;
  readonly creates: number;
  readonly createP50Ms: number;
  readonly createP99Ms: number;
  readonly reads: number;
  readonly readP50Ms: number;
  readonly readP99Ms: number;
  /** Commit (the message's created_at) → the healthy endpoint's receiver, of the deliveries that arrived in the interval. */
  readonly webhookP99Ms: number;
  readonly errors5xx: number;
  /** Requests sent and not answered yet at the interval's end. */
  readonly inFlight: number;
  readonly apiRssMb: number | undefined;
  readonly dispatcherRssMb: number | undefined;
  readonly history: HistorySize;
  /** Seconds in which a statement of the retention was seen running (sampled every 250 ms). */
  readonly sweepSeconds: number;
}

/** The soak's results. */
export interface SoakResult {
  /** The server: version, kind, durability. */
  readonly postgres: string;
  readonly settings: Omit<SoakSettings, "log" | "signatureHeader">;
  readonly intervals: readonly SoakInterval[];
  readonly creates: number;
  readonly reads: number;
  readonly errors5xx: number;
  /** Requests that got no answer (connection refused or reset, timeout). */
  readonly failedRequests: number;
  /** The healthy organization's creates whose delivery never arrived. */
  readonly lost: number;
  readonly duplicates: number;
  readonly badSignatures: number;
  readonly targets: readonly TargetCheck[];
}

const rssMb = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
};

const historySize = async (meter: CostMeter, healthy: number, failing: number): Promise<HistorySize> => {
  const rows: Record<string, number> = {};
  let bytes = 0;
  for (const table of HISTORY_TABLES) {
    rows[table] = await meter.count(`select count(*) as n from ${table}`);
    bytes += await meter.count(
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0) as n from pg_class c
       where c.oid = '${table}'::regclass or c.oid in (select relid from pg_partition_tree('${table}'))`,
    );
  }
  const messagesOf = (organization: number) => meter.count(`select count(*) as n from webhook_messages where organization_id = ${organization}`);
  return { rows, bytes, healthyMessages: await messagesOf(healthy), failingMessages: await messagesOf(failing) };
};

const historyRows = (h: HistorySize) => Object.values(h.rows).reduce((a, n) => a + n, 0);
const quarterOf = (at: number, durationMs: number) => Math.min(3, Math.floor((at / durationMs) * 4));
const ms = (values: readonly number[], q: number) => (values.length === 0 ? Number.NaN : percentile(values, q));
const maxOf = (values: ReadonlyArray<number | undefined>) => Math.max(...values.filter((v): v is number => v !== undefined));

/** The targets, last quarter against the second (0-based quarters 3 and 1). */
const soakTargets = (
  result: Omit<SoakResult, "targets">,
  quarters: { create: number[][]; read: number[][]; webhook: number[][] },
): TargetCheck[] => {
  const byQuarter = (interval: SoakInterval) => quarterOf(interval.endSeconds * 1000 - 1, result.settings.durationMs);
  const second = result.intervals.filter((i) => byQuarter(i) === 1);
  const last = result.intervals.filter((i) => byQuarter(i) === 3);
  const mean = (values: readonly number[]) => values.reduce((a, v) => a + v, 0) / Math.max(1, values.length);
  const within = (name: string, lastValue: number, secondValue: number, unit: string): TargetCheck => ({
    name: `${name}: last quarter against the second`,
    value: `${lastValue.toFixed(1)} ${unit} against ${secondValue.toFixed(1)} ${unit} (${(lastValue / secondValue).toFixed(2)}×)`,
    target: "≤ 1.3×",
    pass: lastValue <= 1.3 * secondValue,
  });
  return [
    within("History rows (messages, deliveries, attempts, request log; mean of the intervals)",
      mean(last.map((i) => historyRows(i.history))), mean(second.map((i) => historyRows(i.history))), "rows"),
    within("Create p99", ms(quarters.create[3]!, 0.99), ms(quarters.create[1]!, 0.99), "ms"),
    within("Read p99", ms(quarters.read[3]!, 0.99), ms(quarters.read[1]!, 0.99), "ms"),
    within("Webhook delivery p99 (healthy endpoint)", ms(quarters.webhook[3]!, 0.99), ms(quarters.webhook[1]!, 0.99), "ms"),
    within("API RSS (largest)", maxOf(last.map((i) => i.apiRssMb)), maxOf(second.map((i) => i.apiRssMb)), "MB"),
    within("Dispatcher RSS (largest)", maxOf(last.map((i) => i.dispatcherRssMb)), maxOf(second.map((i) => i.dispatcherRssMb)), "MB"),
    { name: "5xx answers", value: String(result.errors5xx), target: "0", pass: result.errors5xx === 0 },
    { name: "Requests with no answer", value: String(result.failedRequests), target: "0", pass: result.failedRequests === 0 },
    { name: "Lost deliveries (healthy endpoint)", value: String(result.lost), target: "0", pass: result.lost === 0 },
    { name: "Duplicate deliveries (healthy endpoint)", value: String(result.duplicates), target: "0", pass: result.duplicates === 0 },
  ];
};

/** Starts everything, runs the load for the duration, stops what it started; the results. */
export const runSoak = async (settings: SoakSettings): Promise<SoakResult> => {
  const { log } = settings;
  const intervalMs = Math.min(60_000, Math.max(1_000, Math.floor(settings.durationMs / 8)));
  const postgres = await startTestPostgres({ durable: true });
  const stops: Array<() => Promise<unknown>> = [() => postgres.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((error: unknown) => console.error("soak: stopping:", error));
  };
  try {
    const db: TestDatabase = await createTestDatabase(postgres.adminUrl);
    stops.push(() => db.dispose());
    // The healthy endpoint's deliveries: client id → latency (commit → arrival).
    const arrivedClients = new Map<number, { at: number; latencyMs: number }>();
    const healthyReceiver = await startReceiver(settings.signatureHeader, {
      onFirstArrival: (body, at) => {
        const envelope = JSON.parse(body.toString("utf8")) as { created_at: string; data: { id: number } };
        arrivedClients.set(envelope.data.id, { at, latencyMs: at - Date.parse(envelope.created_at) });
      },
    });
    stops.push(() => healthyReceiver.close());
    const failingReceiver = await startReceiver(settings.signatureHeader, { status: 500 });
    stops.push(() => failingReceiver.close());
    const healthy = await createOrganization(db, "Healthy Catering", "EUR");
    const failing = await createOrganization(db, "Failing Catering", "EUR");
    const healthyEndpoint = await db.run(WebhookEndpointRepository.use((e) => e.add(healthy.scope, healthyReceiver.url, ["client.created"], generateSigningSecret())));
    await db.run(WebhookEndpointRepository.use((e) => e.add(failing.scope, failingReceiver.url, ["client.created"], generateSigningSecret())));
    healthyReceiver.reset(healthyEndpoint.secret);

    // Limits the load never reaches: the soak measures the API's work, not its refusals.
    const unlimited = String(Math.max(1_000, settings.rate * 10));
    // Both processes read the retention: whichever starts first makes the history's partitions, at its width.
    const retention = { WEBHOOK_RETENTION: `${settings.retentionMs}ms` };
    const api = await startApiProcess(db.url, {
      ...retention,
      RATE_LIMIT: unlimited, RATE_LIMIT_BURST: unlimited, RATE_LIMIT_CREATES: unlimited, RATE_LIMIT_CREATES_BURST: unlimited,
    });
    stops.push(() => api.stop());
    const dispatcher: WorkerProcess = await startDispatcherProcess(db.url, loadDispatcherConfig({}).concurrency, {
      endpointCap: "production",
      env: { ...retention, WEBHOOK_RETENTION_SWEEP: `${settings.sweepMs}ms` },
    });
    stops.push(() => dispatcher.stop());
    await Promise.all([api.ready, dispatcher.ready]);
    log(`soak: API (pid ${api.pid}) and dispatcher (pid ${dispatcher.pid}) running; ${settings.rate} creates/s for ` +
      `${settings.durationMs / 1000} s, retention ${settings.retentionMs / 1000} s (swept every ${settings.sweepMs / 1000} s), intervals of ${intervalMs / 1000} s`);

    const meter = await CostMeter.open(db.url);
    stops.push(() => meter.close());
    const durable = await meter.count(
      "select (current_setting('fsync') = 'on' and current_setting('synchronous_commit') = 'on' and current_setting('full_page_writes') = 'on')::int as n",
    );
    const version = await meter.count("select current_setting('server_version_num')::int as n");
    const postgresLine = `PostgreSQL ${Math.floor(version / 10_000)}.${version % 10_000}, ${postgres.kind}, ${durable === 1 ? "durable (fsync, synchronous_commit, full_page_writes on)" : "NOT durable"}`;
    const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
    stops.push(() => agent.close());
    const creates: Sample[] = [];
    const reads: Sample[] = [];
    const healthyClients: number[] = [];
    let failedRequests = 0;
    const inFlight = new Set<Promise<void>>();
    const began = Date.now();
    const call = (kind: "create" | "read", key: string, n: number) => {
      const sent = performance.now();
      const done = request(`${api.url}/v1/clients${kind === "read" ? "?limit=20" : ""}`, {
        method: kind === "create" ? "POST" : "GET",
        dispatcher: agent,
        headers: { authorization: `Bearer ${key}`, ...(kind === "create" ? { "content-type": "application/json" } : {}) },
        ...(kind === "create" ? { body: JSON.stringify({ name: `Soak client ${n}` }) } : {}),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      }).then(async (response) => {
        const text = await response.body.text();
        (kind === "create" ? creates : reads).push({ at: Date.now() - began, ms: performance.now() - sent, status: response.statusCode });
        if (kind === "create" && response.statusCode === 201 && key === healthy.writeKey) healthyClients.push((JSON.parse(text) as { id: number }).id);
      }, () => void (failedRequests += 1));
      const tracked = done.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    };

    // The retention's statements, sampled: how long forgetting runs per interval.
    let sweepSamples = 0;
    let sampling = true;
    const sampler = (async () => {
      const watcher = await CostMeter.open(db.url);
      try {
        while (sampling) {
          if ((await watcher.count(`select count(*) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state = 'active' and ${SWEEP_STATEMENT}`)) > 0) sweepSamples += 1;
          await sleep(SWEEP_SAMPLE_MS);
        }
      } finally {
        await watcher.close();
      }
    })();
    stops.push(async () => {
      sampling = false;
      await sampler;
    });

    const intervals: SoakInterval[] = [];
    let from = 0;
    let sweepFrom = 0;
    const closeInterval = async (to: number) => {
      const inWindow = (s: Sample) => s.at >= from && s.at < to;
      const c = creates.filter(inWindow);
      const r = reads.filter(inWindow);
      const webhook = [...arrivedClients.values()].filter((a) => a.at - began >= from && a.at - began < to).map((a) => a.latencyMs);
      const interval: SoakInterval = {
        endSeconds: to / 1000,
        creates: c.length,
        createP50Ms: ms(c.map((s) => s.ms), 0.5),
        createP99Ms: ms(c.map((s) => s.ms), 0.99),
        reads: r.length,
        readP50Ms: ms(r.map((s) => s.ms), 0.5),
        readP99Ms: ms(r.map((s) => s.ms), 0.99),
        webhookP99Ms: ms(webhook, 0.99),
        errors5xx: [...c, ...r].filter((s) => s.status >= 500).length,
        inFlight: inFlight.size,
        apiRssMb: rssMb(api.pid),
        dispatcherRssMb: rssMb(dispatcher.pid),
        history: await historySize(meter, healthy.id, failing.id),
        sweepSeconds: ((sweepSamples - sweepFrom) * SWEEP_SAMPLE_MS) / 1000,
      };
      sweepFrom = sweepSamples;
      from = to;
      intervals.push(interval);
      log(soakIntervalLine(interval));
    };

    // Open loop at the fixed rate: each request sent on its schedule, whatever the ones before are doing.
    const total = Math.round((settings.rate * settings.durationMs) / 1000);
    let nextInterval = intervalMs;
    for (let n = 0; n < total; n += 1) {
      const wait = began + (n * 1000) / settings.rate - Date.now();
      if (wait > 0) await sleep(wait);
      while (Date.now() - began >= nextInterval) {
        await closeInterval(nextInterval);
        nextInterval += intervalMs;
      }
      call("create", n % 2 === 0 ? healthy.writeKey : failing.writeKey, n);
      if (n % READ_EVERY === 0) call("read", n % (2 * READ_EVERY) === 0 ? healthy.readKey : failing.readKey, n);
    }
    await Promise.all(inFlight);
    while (nextInterval <= settings.durationMs + intervalMs / 2) {
      const wait = began + nextInterval - Date.now();
      if (wait > 0) await sleep(wait);
      await closeInterval(nextInterval);
      nextInterval += intervalMs;
    }
    // Every healthy create's delivery arrives, or counts as lost.
    const drainUntil = Date.now() + DRAIN_MS;
    while (healthyClients.some((id) => !arrivedClients.has(id)) && Date.now() < drainUntil) await sleep(100);
    const partial: Omit<SoakResult, "targets"> = {
      postgres: postgresLine,
      settings: { durationMs: settings.durationMs, rate: settings.rate, retentionMs: settings.retentionMs, sweepMs: settings.sweepMs },
      intervals,
      creates: creates.length,
      reads: reads.length,
      errors5xx: [...creates, ...reads].filter((s) => s.status >= 500).length,
      failedRequests,
      lost: healthyClients.filter((id) => !arrivedClients.has(id)).length,
      duplicates: healthyReceiver.duplicates(),
      badSignatures: healthyReceiver.badSignatures(),
    };
    const quarters = { create: [[], [], [], []] as number[][], read: [[], [], [], []] as number[][], webhook: [[], [], [], []] as number[][] };
    for (const s of creates) quarters.create[quarterOf(s.at, settings.durationMs)]!.push(s.ms);
    for (const s of reads) quarters.read[quarterOf(s.at, settings.durationMs)]!.push(s.ms);
    for (const a of arrivedClients.values()) quarters.webhook[quarterOf(a.at - began, settings.durationMs)]!.push(a.latencyMs);
    return { ...partial, targets: soakTargets(partial, quarters) };
  } catch (error) {
    console.error("soak failed:", error);
    throw error;
  } finally {
    await stopAll();
  }
};

const f = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? "n/a" : n.toFixed(digits));

/** The headings of an interval's row. */
export const SOAK_HEADINGS = [
  "at s", "creates", "create p50/p99 ms", "reads", "read p50/p99 ms", "webhook p99 ms", "5xx", "in flight", "API RSS MB", "dispatcher RSS MB",
  "messages healthy / failing", "deliveries", "attempts", "request log", "history MB", "sweep s",
];

/** An interval as a row of cells. */
export const soakIntervalRow = (i: SoakInterval): string[] => [
  f(i.endSeconds, i.endSeconds % 1 === 0 ? 0 : 1), String(i.creates), `${f(i.createP50Ms)} / ${f(i.createP99Ms)}`, String(i.reads), `${f(i.readP50Ms)} / ${f(i.readP99Ms)}`,
  f(i.webhookP99Ms), String(i.errors5xx), String(i.inFlight), f(i.apiRssMb, 0), f(i.dispatcherRssMb, 0),
  `${i.history.healthyMessages} / ${i.history.failingMessages}`, String(i.history.rows["webhook_deliveries"]), String(i.history.rows["webhook_attempts"]),
  String(i.history.rows["api_requests"]), f(i.history.bytes / 2 ** 20), f(i.sweepSeconds, 2),
];

const soakIntervalLine = (i: SoakInterval): string => SOAK_HEADINGS.map((h, n) => `${h} ${soakIntervalRow(i)[n]}`).join(", ");
