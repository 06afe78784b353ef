import { setTimeout as sleep } from "node:timers/promises";
import { loadDispatcherConfig } from "@platter/dispatcher";
import { apiKeyActor, DEFAULT_ENDPOINTS_PER_ORGANIZATION, generateSigningSecret, organizationShare } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import {
  createOrganization, createTestDatabase, nothingHeld, sealSecretsWrittenInClear, TEST_SECRET_KEYS_TEXT, type TestDatabase,
} from "@platter/testing";
import { deliveryPolicy } from "@platter/webhooks";
import { Effect } from "effect";
import { type Bench, drainBacklog, measureLatency, measureOnOwnPlatform, timeEach } from "./measurements.ts";
import { deliveryRecord, enqueueBacklog, outboxSingleEvents, PLATTER_QUEUE, sql, withPlatterDatabase } from "./platter-outbox.ts";
import { type HoldingReceiver, startHoldingReceiver, startReceiver } from "./receiver.ts";
import type { BusyOriginResult, ClaimCost, FanOutCost, OriginsRun, TenantsResult } from "./report.ts";
import { startDispatcherProcess, type WorkerProcess } from "./worker-processes.ts";
import { Clients } from "@platter/application";

/**
 * Tenant isolation (issue 16): what one organization's endpoints can cost another. Every scenario
 * runs real dispatcher processes with the production caps (WEBHOOK_ENDPOINT_CONCURRENCY 16, no
 * WEBHOOK_ORGANIZATION_CONCURRENCY) against receivers on 127.0.0.1, or calls the storage services
 * in this process, on a fresh database of the run's durable PostgreSQL.
 */

/** The dispatcher's default cap on attempts in flight per endpoint (WEBHOOK_ENDPOINT_CONCURRENCY), which these scenarios keep. */
export const ENDPOINT_CAP = loadDispatcherConfig({}).endpointConcurrency;

/** What the scenarios share with the rest of the run. */
export interface IsolationRun {
  readonly bench: Bench;
  readonly adminUrl: string;
  /** DISPATCHER_CONCURRENCY of every dispatcher process. */
  readonly concurrency: number;
  /** The low-load latency measurement's rate (events/s) and length (s). */
  readonly latencyRate: number;
  readonly latencySeconds: number;
  readonly signatureHeader: string;
  readonly log: (line: string) => void;
}

const count = (n: number) => n.toLocaleString("en-US");
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** An organization of the scenario and its endpoints, in the order their URLs were given. */
interface OrganizationEndpoints {
  readonly id: number;
  readonly secrets: readonly string[];
}

/**
 * Registers one endpoint (client.created) per URL through `WebhookEndpointRepository.add`, as the
 * CLI and the Developer area do, `perOrganization` to an organization (new ones, named `name n`).
 */
const organizationsWithEndpoints = async (
  db: TestDatabase,
  name: string,
  urls: readonly string[],
  perOrganization: number,
): Promise<OrganizationEndpoints[]> => {
  const organizations: OrganizationEndpoints[] = [];
  for (let first = 0; first < urls.length; first += perOrganization) {
    const org = await createOrganization(db, `${name} ${organizations.length + 1}`, "EUR");
    const secrets: string[] = [];
    for (const url of urls.slice(first, first + perOrganization)) {
      const endpoint = await db.run(WebhookEndpointRepository.use((e) => e.add(org.scope, url, ["client.created"], generateSigningSecret())));
      secrets.push(endpoint.secret);
    }
    organizations.push({ id: org.id, secrets });
  }
  return organizations;
};

/** Pending deliveries of the organizations `ids`, and those with a live lease (attempts in flight). */
const pendingOf = async (db: TestDatabase, ids: readonly number[]): Promise<{ pending: number; inFlight: number }> => {
  const [row] = await sql<{ pending: number; in_flight: number }>(
    db,
    `select count(*)::int as pending, (count(*) filter (where lease_expires_at > now()))::int as in_flight
     from webhook_deliveries where status = 'pending' and organization_id = any(?::bigint[])`,
    [`{${ids.join(",")}}`],
  );
  return { pending: row!.pending, inFlight: row!.in_flight };
};

/** Sizes of `tenants`. */
export interface TenantsSettings {
  readonly endpoints: number;
  /** Deliveries queued per slow endpoint. */
  readonly perEndpoint: number;
  readonly holdMs: number;
  readonly latencySeconds: number;
}

/**
 * `tenants`: organization A's `endpoints` endpoints, each on an origin of its own, hold every
 * request `holdMs` (under the timeout) with `perEndpoint` deliveries queued at each; organization
 * B's commit → receiver latency at the low-load rate meanwhile, one dispatcher.
 */
export const measureTenants = async (run: IsolationRun, s: TenantsSettings): Promise<TenantsResult> => {
  const servers: HoldingReceiver[] = [];
  try {
    for (let n = 0; n < s.endpoints; n += 1) servers.push(await startHoldingReceiver(s.holdMs));
    return await withPlatterDatabase(run.adminUrl, run.bench.receiver.url, async (db, organizationId, secret) => {
      const [slow] = await organizationsWithEndpoints(db, "Slow endpoints", servers.map((r) => r.url), s.endpoints);
      await enqueueBacklog(db, slow!.id, s.perEndpoint);
      run.bench.receiver.reset(secret);
      const dispatcher = await startDispatcherProcess(db.url, run.concurrency, { endpointCap: "production" });
      try {
        await dispatcher.ready;
        await sleep(1000); // the slow organization at its share
        run.log(`tenants: latency beside ${s.endpoints} endpoints holding ${s.holdMs / 1000} s (${count(s.endpoints * s.perEndpoint)} queued)…`);
        const latency = await measureLatency(run.bench,
          `Other organization beside ${s.endpoints} endpoints of one organization on ${s.endpoints} origins, each holding every request ` +
          `${s.holdMs / 1000} s (${count(s.endpoints * s.perEndpoint)} queued)`,
          run.latencyRate, s.latencySeconds, outboxSingleEvents(db, organizationId));
        const { inFlight } = await pendingOf(db, [slow!.id]);
        return { latency, endpoints: s.endpoints, queued: s.endpoints * s.perEndpoint, holdMs: s.holdMs, slowInFlight: inFlight };
      } finally {
        await dispatcher.stop();
      }
    });
  } finally {
    await Promise.all(servers.map((r) => r.close()));
  }
};

/** Sizes of `origin`. */
export interface BusyOriginSettings {
  readonly endpoints: number;
  readonly perEndpoint: number;
  readonly holdMs: number;
  /** WEBHOOK_ORIGIN_CONNECTIONS given to the dispatcher. */
  readonly originConnections: number;
}

/**
 * `origin`: `endpoints` endpoints (16 to an organization) on one origin, one server answering each
 * request after `holdMs`, with `perEndpoint` deliveries queued at each; another organization's
 * commit → receiver latency at the low-load rate meanwhile, and the busy origin's deliveries/s
 * over the same window, one dispatcher.
 */
export const measureBusyOrigin = async (run: IsolationRun, s: BusyOriginSettings): Promise<BusyOriginResult> => {
  const busy = await startHoldingReceiver(s.holdMs);
  try {
    return await withPlatterDatabase(run.adminUrl, run.bench.receiver.url, async (db, organizationId, secret) => {
      const organizations = await organizationsWithEndpoints(db, "Busy origin", range(s.endpoints).map((n) => `${busy.url}/${n}`), ENDPOINT_CAP);
      for (const organization of organizations) await enqueueBacklog(db, organization.id, s.perEndpoint);
      run.bench.receiver.reset(secret);
      const dispatcher = await startDispatcherProcess(db.url, run.concurrency, {
        endpointCap: "production",
        env: { WEBHOOK_ORIGIN_CONNECTIONS: String(s.originConnections) },
      });
      try {
        await dispatcher.ready;
        await sleep(1000); // the busy origin at full speed
        run.log(`origin: latency beside ${s.endpoints} endpoints on one origin answering in ${s.holdMs} ms…`);
        const answeredBefore = busy.answered();
        const began = performance.now();
        const latency = await measureLatency(run.bench,
          `Other organization beside ${s.endpoints} endpoints on one origin answering in ${s.holdMs} ms ` +
          `(${count(s.endpoints * s.perEndpoint)} queued, WEBHOOK_ORIGIN_CONNECTIONS=${s.originConnections})`,
          run.latencyRate, run.latencySeconds, outboxSingleEvents(db, organizationId));
        const busySeconds = (performance.now() - began) / 1000;
        const busyAnswered = busy.answered() - answeredBefore;
        const { pending } = await pendingOf(db, organizations.map((o) => o.id));
        return {
          latency, endpoints: s.endpoints, organizations: organizations.length, queued: s.endpoints * s.perEndpoint, holdMs: s.holdMs,
          originConnections: s.originConnections, busyAnswered, busySeconds, busyPendingAtEnd: pending,
          idealPerSecond: Math.min(run.concurrency, s.originConnections, s.endpoints * ENDPOINT_CAP) / (s.holdMs / 1000),
        };
      } finally {
        await dispatcher.stop();
      }
    });
  } finally {
    await busy.close();
  }
};

/** Sizes of `origins`. */
export interface OriginsSettings {
  readonly endpoints: number;
  readonly holdMs: number;
  /** One drain per entry, by that many dispatcher processes. */
  readonly dispatchers: readonly number[];
  /** The backlog is sized to last this long at the ideal rate. */
  readonly seconds: number;
}

/**
 * `origins`: `endpoints` endpoints (one to an organization), each on an origin of its own (one
 * receiver port each, answering after `holdMs`), drained by 1, 2 and 4 dispatcher processes, each
 * run on a fresh database with a backlog of `seconds` at the ideal rate, measured as the backlog
 * drains are (`drainBacklog`: CPU, rows, WAL).
 */
export const measureDistinctOrigins = async (run: IsolationRun, s: OriginsSettings): Promise<OriginsRun[]> => {
  const receiver = await startReceiver(run.signatureHeader, { origins: s.endpoints, holdMs: s.holdMs });
  const runs: OriginsRun[] = [];
  try {
    for (const dispatchers of s.dispatchers) {
      const idealPerSecond = Math.min(run.concurrency * dispatchers, s.endpoints * ENDPOINT_CAP) / (s.holdMs / 1000);
      const perEndpoint = Math.ceil((idealPerSecond * s.seconds) / s.endpoints);
      const deliveries = perEndpoint * s.endpoints;
      const db = await createTestDatabase(run.adminUrl);
      try {
        // One endpoint to an organization: each message is then one delivery, and the receiver counts envelopes.
        const organizations = await organizationsWithEndpoints(db, "Distinct origins", receiver.urls, 1);
        for (const organization of organizations) await enqueueBacklog(db, organization.id, perEndpoint);
        receiver.reset(organizations.flatMap((o) => o.secrets));
        run.log(`origins: ${count(deliveries)} deliveries to ${s.endpoints} origins answering in ${s.holdMs} ms, ${dispatchers} dispatcher(s)…`);
        const samples: SlotSample[][] = [];
        let sampling: ReturnType<typeof setInterval> | undefined;
        const result = await drainBacklog({ ...run.bench, receiver },
          `Platter dispatcher ×${dispatchers}, ${s.endpoints} endpoints on ${s.endpoints} origins answering in ${s.holdMs} ms`,
          deliveries, { databaseUrl: db.url, adminUrl: run.adminUrl, queue: PLATTER_QUEUE },
          async () => {
            const workers = await Promise.all(range(dispatchers).map(() => startDispatcherProcess(db.url, run.concurrency, { endpointCap: "production" })));
            sampling = sampleSlots(workers, samples);
            return workers;
          }).finally(() => clearInterval(sampling));
        const record = await deliveryRecord(db, deliveries);
        run.log(`  ${record.line}`);
        const arrivals = [...receiver.arrivals.values()];
        const from = Math.min(...arrivals) + s.holdMs;
        const to = Math.max(...arrivals) - 2 * s.holdMs;
        const steadyPerSecond = arrivals.filter((at) => at >= from && at < to).length / ((to - from) / 1000);
        const perSecond: number[] = [];
        for (const at of arrivals) {
          const second = Math.floor((at - (from - s.holdMs)) / 1000);
          perSecond[second] = (perSecond[second] ?? 0) + 1;
        }
        run.log(`  arrivals per second from the first: ${Array.from(perSecond, (n) => n ?? 0).join(" ")}`);
        const slots = slotsInUse(samples, from, to, run.concurrency);
        runs.push({
          dispatchers, endpoints: s.endpoints, holdMs: s.holdMs, idealPerSecond, steadyPerSecond, ...slots,
          throughput: { ...result, attemptsRecorded: record.attempts },
        });
      } finally {
        await db.dispose();
      }
    }
    return runs;
  } finally {
    await receiver.close();
  }
};

/** One scrape of a dispatcher's slot counters. */
interface SlotSample {
  readonly at: number;
  readonly slotSeconds: number;
  readonly attemptSeconds: number;
  readonly attempts: number;
}

/** Scrapes each dispatcher's metrics every 2 s (each scrape costs the database a query) into `samples` (one list per dispatcher), until cleared. */
const sampleSlots = (workers: ReadonlyArray<WorkerProcess>, samples: SlotSample[][]): ReturnType<typeof setInterval> => {
  for (const _ of workers) samples.push([]);
  return setInterval(() => {
    workers.forEach((worker, i) => {
      void fetch(worker.metricsUrl!).then((r) => r.text()).then((text) => {
        const value = (name: string) => Number(text.split("\n").find((line) => line.startsWith(`${name} `))?.split(" ")[1] ?? Number.NaN);
        samples[i]!.push({
          at: Date.now(), slotSeconds: value("platter_dispatcher_slot_seconds_total"),
          attemptSeconds: value("platter_webhook_attempt_duration_seconds_sum"), attempts: value("platter_webhook_attempt_duration_seconds_count"),
        });
      }, () => {});
    });
  }, 2000);
};

/**
 * Over the steady window (the first and last scrapes inside it, per dispatcher): the share of the
 * dispatchers' slots in use, and how long an attempt took on average.
 */
const slotsInUse = (samples: SlotSample[][], from: number, to: number, concurrency: number) => {
  const spans = samples.map((list) => list.filter((x) => x.at >= from && x.at <= to)).filter((list) => list.length >= 2)
    .map((list) => ({ first: list[0]!, last: list.at(-1)! }));
  const share = spans.reduce((sum, { first, last }) =>
    sum + (last.slotSeconds - first.slotSeconds) / ((last.at - first.at) / 1000) / concurrency, 0) / Math.max(1, spans.length);
  const attemptMs = 1000 * spans.reduce((sum, { first, last }) => sum + last.attemptSeconds - first.attemptSeconds, 0) /
    Math.max(1, spans.reduce((sum, { first, last }) => sum + last.attempts - first.attempts, 0));
  return { slotShare: spans.length === 0 ? Number.NaN : share, meanAttemptMs: attemptMs };
};

/** Sizes of `many-endpoints`. */
export interface ManyEndpointsSettings {
  /** One organization with this many endpoints, each size in a fresh database. */
  readonly endpoints: readonly number[];
  /** Messages queued, each delivered to every endpoint: deliveries pending per endpoint. */
  readonly perEndpoint: number;
  readonly claims: number;
  /** Deliveries each claim asks for (`limit`). */
  readonly claimSize: number;
}

/** A claim's lease in `many-endpoints`: short, so the next claim finds the same deliveries due again. */
const SHORT_LEASE_MS = 1;

/**
 * `many-endpoints`: one organization with `endpoints` endpoints, seeded by SQL (the repository
 * keeps an organization to WEBHOOK_ENDPOINTS_PER_ORGANIZATION), `perEndpoint` messages each
 * delivered to every one of them (`enqueueBacklog`, as the API records them); then `claims` claims
 * of `claimSize` in this process (`DeliveryQueue.claimDue`, the dispatcher's production policy and
 * a fresh dispatcher's held slots), each leased for 1 ms so the next finds as much due; timed one
 * by one, with the tables' read and write counters and the WAL over them all.
 */
export const measureManyEndpoints = async (run: IsolationRun, s: ManyEndpointsSettings): Promise<ClaimCost[]> => {
  const costs: ClaimCost[] = [];
  for (const endpoints of s.endpoints) {
    const db = await createTestDatabase(run.adminUrl);
    try {
      const org = await createOrganization(db, `${count(endpoints)} endpoints`, "EUR");
      // Never sent anything (no dispatcher runs): the URLs only need to be well formed, each on an
      // origin of its own (so no origin's connections limit a claim).
      await sql(db,
        `insert into webhook_endpoints (organization_id, url, origin, secret, event_types)
         select ?::bigint, 'https://e' || n || '.example/hook', 'https://e' || n || '.example', ?, '{client.created}'
         from generate_series(1, ?::int) n`,
        [org.id, generateSigningSecret(), endpoints]);
      await sealSecretsWrittenInClear(db);
      await sql(db, "analyze webhook_endpoints");
      await enqueueBacklog(db, org.id, s.perEndpoint);
      const config = loadDispatcherConfig({ DATABASE_URL: db.url, SECRET_ENCRYPTION_KEYS: TEST_SECRET_KEYS_TEXT, WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
      const policy = deliveryPolicy(config);
      // What a fresh dispatcher holds: nothing in flight, the production shares.
      const held = { ...nothingHeld, share: config.endpointConcurrency, organizationShare: organizationShare(config, 1) };
      run.log(`many-endpoints: ${s.claims} claims of ${s.claimSize} over ${count(endpoints)} endpoints with work…`);
      const { result, cost } = await measureOnOwnPlatform({ databaseUrl: db.url, adminUrl: run.adminUrl }, config, async (platform) => {
        const queue = await platform.runPromise(DeliveryQueue.use(Effect.succeed));
        return timeEach(s.claims, async () => {
          const { due, unreadable } = await Effect.runPromise(queue.claimDue(s.claimSize, SHORT_LEASE_MS, policy, held));
          if (unreadable.length > 0) throw new Error(`${unreadable.length} claimed deliveries were unreadable`);
          return due.length;
        }, () => sleep(SHORT_LEASE_MS + 4));
      });
      costs.push({ endpoints, pending: endpoints * s.perEndpoint, asked: s.claimSize, ms: result.ms, claimed: result.results, cost });
    } finally {
      await db.dispose();
    }
  }
  return costs;
};

/** Sizes of `fan-out`. */
export interface FanOutSettings {
  readonly creates: number;
}

/**
 * `fan-out`: `creates` clients created one after another through `Clients.create` (the
 * API's write: the client, its message and one delivery per subscribed endpoint, one transaction)
 * for an organization with 1 endpoint, then for one with the limit (WEBHOOK_ENDPOINTS_PER_ORGANIZATION's
 * default, 50), in one database; timed one by one, with the rows written and the WAL over them all.
 */
export const measureFanOut = async (run: IsolationRun, s: FanOutSettings): Promise<FanOutCost[]> => {
  const db = await createTestDatabase(run.adminUrl);
  try {
    const config = loadDispatcherConfig({ DATABASE_URL: db.url, SECRET_ENCRYPTION_KEYS: TEST_SECRET_KEYS_TEXT });
    const costs: FanOutCost[] = [];
    for (const endpoints of [1, DEFAULT_ENDPOINTS_PER_ORGANIZATION]) {
      const org = await createOrganization(db, `Fan-out to ${endpoints}`, "EUR");
      // Never sent anything (no dispatcher runs): the URLs only need to be well formed.
      for (const n of range(endpoints)) {
        await db.run(WebhookEndpointRepository.use((e) => e.add(org.scope, `${run.bench.receiver.url}/${n}`, ["client.created"], generateSigningSecret())));
      }
      run.log(`fan-out: ${s.creates} creates for an organization with ${endpoints} ${endpoints === 1 ? "endpoint" : "endpoints"}…`);
      const { result, cost } = await measureOnOwnPlatform({ databaseUrl: db.url, adminUrl: run.adminUrl }, config, (platform) =>
        timeEach(s.creates, (n) => platform.runPromise(Clients.create(apiKeyActor(org.scope), { name: `Client ${n}` }))));
      costs.push({ endpoints, ms: result.ms, cost });
    }
    return costs;
  } finally {
    await db.dispose();
  }
};

/** Every isolation scenario's sizes. */
export interface IsolationSettings {
  readonly tenants: TenantsSettings;
  readonly origin: BusyOriginSettings;
  readonly origins: OriginsSettings;
  readonly manyEndpoints: ManyEndpointsSettings;
  readonly fanOut: FanOutSettings;
}

/** How each isolation scenario is measured, for the report. */
export const isolationSetupOf = (
  concurrency: number,
  latencyRate: number,
  latencySeconds: number,
  s: IsolationSettings,
): { readonly [K in keyof IsolationSettings]: string } => {
  const dispatcher = `one dispatcher process (\`apps/dispatcher/src/main.ts\`, DISPATCHER_CONCURRENCY=${concurrency}, the production ` +
    `WEBHOOK_ENDPOINT_CONCURRENCY=${ENDPOINT_CAP} and no WEBHOOK_ORGANIZATION_CONCURRENCY)`;
  const latency = (seconds: number) => `single events committed one per transaction at ${latencyRate}/s for ${seconds} s ` +
    "(commit → receiver, as the low-load latency above), to its endpoint at the benchmark's receiver (an origin of its own)";
  const busyOrganizations = Math.ceil(s.origin.endpoints / ENDPOINT_CAP);
  return {
    tenants: `Organization A registers ${s.tenants.endpoints} endpoints (\`WebhookEndpointRepository.add\`), each on an origin of its ` +
      `own (${s.tenants.endpoints} servers on 127.0.0.1) that holds every request ${s.tenants.holdMs / 1000} s before its 200 (under the ` +
      `15 s timeout: nothing fails, no circuit opens), with ${count(s.tenants.perEndpoint)} deliveries queued at each ` +
      `(${count(s.tenants.endpoints * s.tenants.perEndpoint)}); ${dispatcher} starts, and a second later organization B's ` +
      `${latency(s.tenants.latencySeconds)}: over two of A's holds, so slots freed and claimed again are inside the window. ` +
      "Issue 16 measured B's p50 at 7.3 s and p99 at 13.9 s here before organizations had a share.",
    origin: `${s.origin.endpoints} endpoints of ${busyOrganizations} organizations (${ENDPOINT_CAP} each) on one origin: one server on ` +
      `127.0.0.1, a path per endpoint, answering each request after ${s.origin.holdMs} ms, with ${count(s.origin.perEndpoint)} ` +
      `deliveries queued at each (${count(s.origin.endpoints * s.origin.perEndpoint)}); ${dispatcher} with ` +
      `WEBHOOK_ORIGIN_CONNECTIONS=${s.origin.originConnections} given explicitly (a dispatcher without the setting ignores it), and a ` +
      `second later another organization's ${latency(latencySeconds)}. Over the same window, the busy origin's answers per second ` +
      `against its ideal, min(concurrency ${concurrency}, origin connections ${s.origin.originConnections}, endpoints × cap ` +
      `${s.origin.endpoints * ENDPOINT_CAP}) / ${s.origin.holdMs / 1000} s.`,
    origins: `${s.origins.endpoints} endpoints, each of an organization of its own (each message is then one delivery, and the ` +
      `receiver counts envelopes) and on an origin of its own (the benchmark's receiver listening on ${s.origins.endpoints} ports, answering each request after ` +
      `${s.origins.holdMs} ms and checking every signature), drained by ${s.origins.dispatchers.join(", ")} dispatcher processes ` +
      `(DISPATCHER_CONCURRENCY=${concurrency} each, production endpoint cap ${ENDPOINT_CAP}), one run each on a fresh database whose ` +
      `backlog lasts ${s.origins.seconds} s at the ideal rate, min(${concurrency} × dispatchers, endpoints × cap ` +
      `${s.origins.endpoints * ENDPOINT_CAP}) / ${s.origins.holdMs / 1000} s. Each drain is measured as the backlog drains above ` +
      "(queue held while the processes start, CPU from /proc from the release until every result is written).",
    manyEndpoints: `One organization with ${s.manyEndpoints.endpoints.map(count).join(", then ")} endpoints (each size in a fresh ` +
      "database; inserted with SQL, since `WebhookEndpointRepository.add` keeps an organization to WEBHOOK_ENDPOINTS_PER_ORGANIZATION), " +
      `${s.manyEndpoints.perEndpoint} \`client.created\` ${s.manyEndpoints.perEndpoint === 1 ? "message" : "messages"} delivered to ` +
      `every one of them (as the backlogs above), so ${s.manyEndpoints.perEndpoint} pending per endpoint. In this process, on a pool of its own, ` +
      `${s.manyEndpoints.claims} claims of ${s.manyEndpoints.claimSize} one after another (\`DeliveryQueue.claimDue\` with the ` +
      "dispatcher's production policy and a fresh dispatcher's held slots), each leased for 1 ms so the next finds as much due; " +
      "each claim timed, and the tables' counters (`pg_stat_user_tables`, `pg_stat_user_indexes`, `pg_statio_user_tables`) and " +
      "the WAL read before (after a checkpoint) and after (once the pool's backends have exited and sent their statistics). " +
      "Rows read per claim: index entries returned plus rows read by sequential scans in the webhook tables.",
    fanOut: `In one database, an organization with 1 endpoint and one with ${DEFAULT_ENDPOINTS_PER_ORGANIZATION} (the default ` +
      "WEBHOOK_ENDPOINTS_PER_ORGANIZATION), all subscribed to `client.created`; for each, in this process on a pool of its own, " +
      `${count(s.fanOut.creates)} clients created one after another through \`Clients.create\`, the API's write (the ` +
      "client, its message and its deliveries in one transaction), each timed; rows written and WAL read as for the claims.",
  };
};
