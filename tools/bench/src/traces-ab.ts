import { type ChildProcess, fork } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
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
const startApi = (databaseUrl: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> =>
  new Promise((done, fail) => {
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_")));
    const child = fork(resolve(import.meta.dirname, "server-process.ts"), {
      execArgv: ["--conditions=@platter/source"],
      env: { ...inherited, BENCH_SERVER: "api", BENCH_DATABASE_URL: databaseUrl, BENCH_POOL_SIZE: String(poolSize), ...env },
    });
    child.once("message", (port) => done({ child, port: port as number }));
    child.once("exit", (code) => fail(new Error(`api server exited with code ${code}`)));
  });

const ratio = (name: string, on: LoadResult, off: LoadResult, metric: "serverCpuUs" | "p50Ms" | "p99Ms" | "requestsPerSecond"): RatioCheck => ({
  name, value: medianRatio(on.rounds.map((r) => r[metric as "serverCpuUs"] ?? Number.NaN), off.rounds.map((r) => r[metric as "serverCpuUs"] ?? Number.NaN)),
  pooled: (on[metric] ?? Number.NaN) / (off[metric] ?? Number.NaN), target: "—", pass: true, informational: true,
});

const run = async () => {
  const postgres = await startTestPostgres({ durable: true });
  const receiver = await startReceiver();
  const servers: ChildProcess[] = [];
  let db: TestDatabase | undefined;
  try {
    db = await createTestDatabase(postgres.adminUrl);
    const org = await createOrganization(db, "Bench Catering", "EUR");
    await db.run(Seeding.bulk(org.scope, { events, clients: 1_000, invoices: 0 }, () => {}));
    await db.orm.em.getConnection().execute("vacuum (analyze) clients, events");
    const off = await startApi(db.url, {});
    const on = await startApi(db.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, OTEL_EXPORTER_OTLP_PROTOCOL: process.env["BENCH_OTLP_PROTOCOL"] ?? "http/protobuf",
    });
    servers.push(off.child, on.child);
    const postgresPort = Number(new URL(db.url).port);
    const read = { authorization: `Bearer ${org.readKey}` };
    const write = { authorization: `Bearer ${org.writeKey}`, "content-type": "application/json" };
    const targets = (label: string, server: { child: ChildProcess; port: number }): LoadTarget[] => {
      const meter = cpuMeter(server.child.pid, postgresPort);
      const baseUrl = `http://127.0.0.1:${server.port}`;
      return [
        { name: `GET /v1/events first page, tracing ${label}`, baseUrl, meter, requests: [{ method: "GET", path: "/v1/events?limit=100", headers: read }] },
        {
          name: `POST /v1/events, tracing ${label}`, baseUrl, meter,
          requests: [{ method: "POST", path: "/v1/events", headers: write, body: JSON.stringify({ name: "Bench dinner" }) }],
        },
      ];
    };
    const [offRead, offWrite] = targets("off", off);
    const [onRead, onWrite] = targets("on", on);
    log(`measuring tracing off and on interleaved: ${load.rounds} rounds, ${load.durationS} s per scenario, ${load.connections} connections…`);
    const [readOff, readOn, writeOff, writeOn] = await measureInterleaved([offRead!, onRead!, offWrite!, onWrite!], load, (round) => log(`  round ${round}/${load.rounds}`));
    log("");
    log(consoleTable([readOff!, readOn!, writeOff!, writeOn!]));
    log("");
    log(consoleRatios([
      ratio("API CPU per request, tracing on / off, GET first page", readOn!, readOff!, "serverCpuUs"),
      ratio("API CPU per request, tracing on / off, POST /v1/events", writeOn!, writeOff!, "serverCpuUs"),
      ratio("p50, tracing on / off, GET first page", readOn!, readOff!, "p50Ms"),
      ratio("p50, tracing on / off, POST /v1/events", writeOn!, writeOff!, "p50Ms"),
      ratio("req/s, tracing on / off, GET first page", readOn!, readOff!, "requestsPerSecond"),
      ratio("req/s, tracing on / off, POST /v1/events", writeOn!, writeOff!, "requestsPerSecond"),
    ]));
    const { requests, bytes } = receiver.stats();
    log(`\nthe receiver took ${requests} exports (${(bytes / 1e6).toFixed(1)} MB); failures: ${[readOff, readOn, writeOff, writeOn].reduce((n, r) => n + r!.errors + r!.non2xx, 0)}`);
  } finally {
    for (const server of servers) server.kill("SIGTERM");
    receiver.close();
    await db?.dispose();
    await postgres.stop();
  }
};

await run();
process.exit(0);
