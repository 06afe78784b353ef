import { type ChildProcess, execFile, execFileSync, fork } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import pg from "pg";
import { Seeding } from "@platter/seeds";
import { createOrganization, createTestDatabase, startTestPostgres, type TestDatabase } from "@platter/testing";
import { wholeNumberSetting } from "./bench-settings.ts";
import { cpuMeter } from "./cpu-meter.ts";
import { type LoadResult, type LoadTarget, measureInterleaved, medianRatio } from "./load.ts";
import { consoleRatios, consoleTable, type RatioCheck } from "./report.ts";

/**
 * `npm run bench:traces`: the API with tracing off against the same API exporting every span
 * (OTEL_EXPORTER_OTLP_ENDPOINT at a receiver on 127.0.0.1 that answers 200), two server processes
 * on one seeded database, measured interleaved round by round: CPU per request and latency, tracing
 * on / off. Prints its table and ratios (docs/performance.md is the lead's). BENCH_EVENTS,
 * BENCH_DURATION_S, BENCH_WARMUP_S, BENCH_ROUNDS, BENCH_CONNECTIONS, BENCH_POOL_SIZE as for `npm run bench`.
 * BENCH_TRACES_BEFORE=<path of another checkout>[,<path>…] (each with its `npm install` done) adds, per
 * checkout, a server from that checkout's own server-process.ts (no OTEL_* variables), on a database on
 * the same PostgreSQL server created, migrated and seeded alike by that checkout's code, measured in
 * the same rounds: tracing off / that checkout, labelled by its commit (and the first listed / each later one).
 */

const setting = (name: string, fallback: number): number => wholeNumberSetting(name, fallback, 0);
const load = {
  connections: setting("BENCH_CONNECTIONS", 20),
  durationS: setting("BENCH_DURATION_S", 16),
  warmupS: setting("BENCH_WARMUP_S", 2),
  rounds: Math.max(1, setting("BENCH_ROUNDS", 8)),
};
const events = Math.max(1_000, setting("BENCH_EVENTS", 20_000));
const poolSize = setting("BENCH_POOL_SIZE", 10);
const beforeCheckouts = (process.env["BENCH_TRACES_BEFORE"] ?? "").split(",").filter((path) => path.trim() !== "").map((path) => resolve(path.trim()));
const log = (line: string) => console.log(line);

/** A collector stand-in: answers every export 200 at once, counting requests and bytes. */
const startReceiver = async () => {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => (bytes += chunk.length));
    req.on("end", () => {
      requests++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { port: (server.address() as AddressInfo).port, stats: () => ({ requests, bytes }), close: () => server.close() };
};

/** The bench's API server process (server-process.ts), with `env` on top of this process's, every OTEL_* variable removed first. */
const startApi = (databaseUrl: string, env: Record<string, string>, benchDir = import.meta.dirname): Promise<{ child: ChildProcess; port: number }> =>
  new Promise((done, fail) => {
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_")));
    const child = fork(resolve(benchDir, "server-process.ts"), {
      execArgv: ["--conditions=@platter/source"],
      env: { ...inherited, BENCH_SERVER: "api", BENCH_DATABASE_URL: databaseUrl, BENCH_POOL_SIZE: String(poolSize), ...env },
    });
    child.once("message", (port) => done({ child, port: port as number }));
    child.once("exit", (code) => fail(new Error(`api server exited with code ${code}`)));
  });

/** The seed this bench gives its own database, as a module run from `tools/bench` of a checkout (resolving that checkout's packages); prints the database and the keys as JSON. */
const seedScript = (adminUrl: string) => `
import { Seeding } from "@platter/seeds";
import { createOrganization, createTestDatabase } from "@platter/testing";
const db = await createTestDatabase(${JSON.stringify(adminUrl)});
const org = await createOrganization(db, "Bench Catering", "EUR");
await db.run(Seeding.bulk(org.scope, { events: ${events}, clients: 1_000, invoices: 0 }, () => {}));
await db.orm.em.getConnection().execute("vacuum (analyze) clients, events");
await db.runtime.dispose();
console.log(JSON.stringify({ url: db.url, readKey: org.readKey, writeKey: org.writeKey }));
process.exit(0);
`;

/** A database created, migrated and seeded by `checkout`'s own code (its migrations may differ from this one's); kept until `dropDatabase`. */
const seedWithCheckout = (checkout: string, adminUrl: string): Promise<{ url: string; readKey: string; writeKey: string }> =>
  new Promise((done, fail) => {
    execFile(
      process.execPath, ["--conditions=@platter/source", "--input-type=module", "-e", seedScript(adminUrl)],
      { cwd: resolve(checkout, "tools/bench"), maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) return fail(new Error(`seeding with ${checkout} failed: ${stderr}`));
        const lines = stdout.trim().split("\n");
        done(JSON.parse(lines[lines.length - 1]!) as { url: string; readKey: string; writeKey: string });
      },
    );
  });

const ratio = (name: string, on: LoadResult, off: LoadResult, metric: "serverCpuUs" | "p50Ms" | "p99Ms" | "requestsPerSecond"): RatioCheck => ({
  name, value: medianRatio(on.rounds.map((r) => r[metric as "serverCpuUs"] ?? Number.NaN), off.rounds.map((r) => r[metric as "serverCpuUs"] ?? Number.NaN)),
  pooled: (on[metric] ?? Number.NaN) / (off[metric] ?? Number.NaN), target: "—", pass: true, informational: true,
});

/** Drops a database `seedWithCheckout` made. */
const dropDatabase = async (adminUrl: string, databaseUrl: string) => {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${new URL(databaseUrl).pathname.slice(1)}" with (force)`);
  } finally {
    await admin.end();
  }
};

const run = async () => {
  const postgres = await startTestPostgres({ durable: true });
  const receiver = await startReceiver();
  const servers: ChildProcess[] = [];
  let db: TestDatabase | undefined;
  const beforeDatabaseUrls: string[] = [];
  try {
    db = await createTestDatabase(postgres.adminUrl);
    const org = await createOrganization(db, "Bench Catering", "EUR");
    await db.run(Seeding.bulk(org.scope, { events, clients: 1_000, invoices: 0 }, () => {}));
    await db.orm.em.getConnection().execute("vacuum (analyze) clients, events");
    const beforeSeeds: Array<{ url: string; readKey: string; writeKey: string; checkout: string; commit: string }> = [];
    for (const checkout of beforeCheckouts) {
      const seed = await seedWithCheckout(checkout, postgres.adminUrl);
      beforeDatabaseUrls.push(seed.url);
      beforeSeeds.push({ ...seed, checkout, commit: execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: checkout, encoding: "utf8" }).trim() });
    }
    const off = await startApi(db.url, {});
    const on = await startApi(db.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, OTEL_EXPORTER_OTLP_PROTOCOL: process.env["BENCH_OTLP_PROTOCOL"] ?? "http/protobuf",
    });
    servers.push(off.child, on.child);
    const befores: Array<(typeof beforeSeeds)[number] & { server: { child: ChildProcess; port: number } }> = [];
    for (const seed of beforeSeeds) {
      const server = await startApi(seed.url, {}, resolve(seed.checkout, "tools/bench/src"));
      servers.push(server.child);
      befores.push({ ...seed, server });
    }
    const postgresPort = Number(new URL(db.url).port);
    const targets = (label: string, server: { child: ChildProcess; port: number }, keys: { readKey: string; writeKey: string }): LoadTarget[] => {
      const meter = cpuMeter(server.child.pid, postgresPort);
      const baseUrl = `http://127.0.0.1:${server.port}`;
      const read = { authorization: `Bearer ${keys.readKey}` };
      const write = { authorization: `Bearer ${keys.writeKey}`, "content-type": "application/json" };
      return [
        { name: `GET /v1/events first page, ${label}`, baseUrl, meter, requests: [{ method: "GET", path: "/v1/events?limit=100", headers: read }] },
        {
          name: `POST /v1/events, ${label}`, baseUrl, meter,
          requests: [{ method: "POST", path: "/v1/events", headers: write, body: JSON.stringify({ name: "Bench dinner" }) }],
        },
      ];
    };
    const [offRead, offWrite] = targets("tracing off", off, org);
    const [onRead, onWrite] = targets("tracing on", on, org);
    const beforeTargets = befores.map((before) => targets(`at ${before.commit}`, before.server, before));
    const measured = [offRead!, onRead!, ...beforeTargets.map(([read]) => read!), offWrite!, onWrite!, ...beforeTargets.map(([, write]) => write!)];
    log(`measuring tracing off, on${befores.map((before) => `, ${before.checkout} at ${before.commit}`).join("")} interleaved: ${load.rounds} rounds, ${load.durationS} s per scenario, ${load.connections} connections…`);
    const results = await measureInterleaved(measured, load, (round) => log(`  round ${round}/${load.rounds}`));
    const half = results.length / 2;
    const [readOff, readOn] = results;
    const [writeOff, writeOn] = results.slice(half);
    log("");
    log(consoleTable(results));
    log("");
    log(consoleRatios([
      ratio("API CPU per request, tracing on / off, GET first page", readOn!, readOff!, "serverCpuUs"),
      ratio("API CPU per request, tracing on / off, POST /v1/events", writeOn!, writeOff!, "serverCpuUs"),
      ratio("p50, tracing on / off, GET first page", readOn!, readOff!, "p50Ms"),
      ratio("p50, tracing on / off, POST /v1/events", writeOn!, writeOff!, "p50Ms"),
      ratio("req/s, tracing on / off, GET first page", readOn!, readOff!, "requestsPerSecond"),
      ratio("req/s, tracing on / off, POST /v1/events", writeOn!, writeOff!, "requestsPerSecond"),
      ...befores.flatMap((before, i) => {
        const [readBefore, writeBefore] = [results[2 + i]!, results[half + 2 + i]!];
        return [
          ratio(`API CPU per request, tracing off / ${before.commit}, GET first page`, readOff!, readBefore, "serverCpuUs"),
          ratio(`API CPU per request, tracing off / ${before.commit}, POST /v1/events`, writeOff!, writeBefore, "serverCpuUs"),
          ratio(`p50, tracing off / ${before.commit}, GET first page`, readOff!, readBefore, "p50Ms"),
          ratio(`p50, tracing off / ${before.commit}, POST /v1/events`, writeOff!, writeBefore, "p50Ms"),
          ratio(`req/s, tracing off / ${before.commit}, GET first page`, readOff!, readBefore, "requestsPerSecond"),
          ratio(`req/s, tracing off / ${before.commit}, POST /v1/events`, writeOff!, writeBefore, "requestsPerSecond"),
          // Each later checkout against the first listed (e.g. the merge that added traces against its parent).
          ...(i === 0 ? [] : [
            ratio(`API CPU per request, ${befores[0]!.commit} / ${before.commit}, GET first page`, results[2]!, readBefore, "serverCpuUs"),
            ratio(`API CPU per request, ${befores[0]!.commit} / ${before.commit}, POST /v1/events`, results[half + 2]!, writeBefore, "serverCpuUs"),
          ]),
        ];
      }),
    ]));
    const { requests, bytes } = receiver.stats();
    log(`\nthe receiver took ${requests} exports (${(bytes / 1e6).toFixed(1)} MB); failures: ${results.reduce((n, r) => n + r.errors + r.non2xx, 0)}`);
  } finally {
    for (const server of servers) server.kill("SIGTERM");
    receiver.close();
    await db?.dispose();
    for (const url of beforeDatabaseUrls) await dropDatabase(postgres.adminUrl, url);
    await postgres.stop();
  }
};

await run();
process.exit(0);
