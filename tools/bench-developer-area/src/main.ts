import { makeSignInLink } from "@platter/application";
import { createServer } from "node:http";
import { cpus, totalmem } from "node:os";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createDeveloperAreaApp } from "@platter/developer-area";
import { encodeCursor } from "@platter/domain";
import { DemoData } from "@platter/application";
import { Seeding } from "@platter/seeds";
import { createOrganization, createTestDatabase, freePort, startTestPostgres } from "@platter/testing";
import pg from "pg";
import { pino } from "pino";
import { consoleTable, type DeveloperAreaBenchReport, type PageResult, type ScanCounts, writeSection } from "./report.ts";
import { wholeNumberSetting } from "@platter/bench/bench-settings";

/**
 * `npm run bench:developer-area`: every page of the Developer area with 10,000 deliveries in the
 * log, against the target of 100 ms server time. Seeds organization A's delivery log (and
 * organization B's beside it), signs in as A, requests each page N times over HTTP on 127.0.0.1,
 * one at a time, timing the server's handling of each (wall and CPU); prints the table and writes
 * the `## Developer area` section of docs/performance.md.
 *
 * Quick runs: BENCH_DA_DELIVERIES (A's deliveries, default 10,000), BENCH_DA_REQUESTS (per page,
 * default 200), BENCH_REPORT (where to write the report; `-` writes nothing).
 */

const setting = (name: string, fallback: number): number => wholeNumberSetting(name, fallback, 1);

const settings = {
  deliveries: setting("BENCH_DA_DELIVERIES", 10_000),
  otherDeliveries: setting("BENCH_DA_OTHER_DELIVERIES", 10_000),
  endpoints: 4,
  requests: setting("BENCH_DA_REQUESTS", 200),
  warmup: 20,
  targetMs: 100,
};
const reportTarget = process.env["BENCH_REPORT"] || resolve(import.meta.dirname, "../../../docs/performance.md");
const LOG_TABLES = ["webhook_deliveries", "webhook_messages", "webhook_attempts"];

/** The server's handling of one request: wall milliseconds and CPU microseconds. */
interface Timing {
  readonly ms: number;
  readonly cpuUs: number;
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

const main = async () => {
  const postgres = await startTestPostgres();
  const db = await createTestDatabase(postgres.adminUrl);
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const query = async <Row extends pg.QueryResultRow>(text: string, params: unknown[] = []) => (await admin.query<Row>(text, params)).rows;
  try {
    console.log(`seeding: ${settings.deliveries} deliveries of A, ${settings.otherDeliveries} of B …`);
    const a = await createOrganization(db, "Harbour Kitchen & Co.");
    const b = await createOrganization(db, "Other Kitchen Ltd");
    await db.run(DemoData.seed(a.scope));
    await db.run(DemoData.seed(b.scope));
    await db.run(Seeding.deliveryLog(b.scope, { deliveries: settings.otherDeliveries, endpoints: 2 }));
    await db.run(Seeding.deliveryLog(a.scope, { deliveries: settings.deliveries, endpoints: settings.endpoints }));
    await query("vacuum (analyze)");

    // The area, with every request's handling timed around its own handler.
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const app = createDeveloperAreaApp(db.runtime, { developerAreaUrl: origin, frameAncestors: "'self'" }, pino({ level: "silent" }));
    const handler = app.callback();
    let last: Timing | undefined;
    const server = createServer((req, res) => {
      const started = process.hrtime.bigint();
      const cpu = process.cpuUsage();
      res.on("finish", () => {
        const used = process.cpuUsage(cpu);
        last = { ms: Number(process.hrtime.bigint() - started) / 1e6, cpuUs: used.user + used.system };
      });
      void handler(req, res);
    });
    await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));

    // Sign in as A, as a browser would.
    const link = await db.run(makeSignInLink(origin, a.id, "cli"));
    // The link's page's "Continue" button: a POST from the area's origin signs in (a GET only shows the page).
    const opened = await fetch(link.url, { method: "POST", redirect: "manual", headers: { origin } });
    if (opened.status !== 303) throw new Error(`sign-in answered ${opened.status}`);
    const cookie = opened.headers.get("set-cookie")!.split(";")[0]!;

    const [endpoint] = await query<{ id: string }>("select id from webhook_endpoints where organization_id = $1 order by id limit 1", [a.id]);
    const [deep] = await query<{ id: string; created_at: string }>(
      `select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at from webhook_deliveries
       where organization_id = $1 order by created_at desc, id desc offset 4999 limit 1`,
      [a.id],
    );
    const [failed] = await query<{ envelope_id: string }>(
      `select m.envelope_id from webhook_messages m join webhook_deliveries d on d.message_id = m.id
       where m.organization_id = $1 and d.status = 'failed' order by m.id limit 1`,
      [a.id],
    );
    const [day] = await query<{ from: string; to: string }>(
      `select to_char(date_trunc('day', max(created_at) - interval '3 days') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as from,
              to_char(date_trunc('day', max(created_at) - interval '2 days') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI') as to
       from webhook_deliveries where organization_id = $1`,
      [a.id],
    );
    const pages: ReadonlyArray<readonly [string, string]> = [
      ["API keys", "/api-keys"],
      ["Webhooks", "/webhooks"],
      ["Deliveries: first page", "/deliveries"],
      ["Deliveries: failed", "/deliveries?status=failed"],
      ["Deliveries: event type", "/deliveries?type=invoice.paid"],
      ["Deliveries: one endpoint", `/deliveries?endpoint=${endpoint!.id}`],
      ["Deliveries: one day", `/deliveries?from=${day!.from}&to=${day!.to}`],
      ["Deliveries: deep page (5,000 in)", `/deliveries?cursor=${encodeCursor("deliveries", [deep!.created_at, Number(deep!.id)])}`],
      ["Deliveries: failed, one endpoint", `/deliveries?status=failed&endpoint=${endpoint!.id}`],
      ["Message with attempts", `/deliveries/${failed!.envelope_id}`],
      ["Event catalog", "/event-catalog"],
      ["API reference", "/api-reference"],
      ["OpenAPI document", "/api-reference/openapi.json"],
    ];

    const request = async (path: string) => {
      last = undefined;
      const response = await fetch(origin + path, { headers: { cookie }, redirect: "manual" });
      const body = await response.arrayBuffer();
      // `finish` fires as the last byte is handed to the socket, before the client has read it all.
      while (last === undefined) await sleep(0);
      return { status: response.status, bytes: body.byteLength, timing: last as Timing };
    };

    const results: PageResult[] = [];
    for (const [name, path] of pages) {
      const probe = await request(path);
      if (probe.status === 404 && path === "/webhooks") {
        console.log("skipping /webhooks: not served by this build");
        continue;
      }
      if (probe.status !== 200) throw new Error(`${path} answered ${probe.status}`);
      for (let i = 0; i < settings.warmup; i += 1) await request(path);
      const scansBefore = await scanCounts(query);
      const timings: Timing[] = [];
      let bytes = 0;
      for (let i = 0; i < settings.requests; i += 1) {
        const answer = await request(path);
        if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
        timings.push(answer.timing);
        bytes = answer.bytes;
      }
      // Backends report their table statistics once idle for a while (at most 10 s): wait for them.
      await sleep(11_000);
      const scans = difference(scansBefore, await scanCounts(query));
      const ms = timings.map((t) => t.ms).sort((x, y) => x - y);
      const cpu = timings.map((t) => t.cpuUs).sort((x, y) => x - y);
      results.push({
        name, path, requests: timings.length, status: 200, bytes,
        p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99), maxMs: ms[ms.length - 1]!, cpuUs: percentile(cpu, 50), scans,
      });
      console.log(`${name}: p50 ${percentile(ms, 50).toFixed(2)} ms, p99 ${percentile(ms, 99).toFixed(2)} ms`);
    }

    server.closeAllConnections();
    await new Promise((done) => server.close(done));
    const [version] = await query<{ version: string }>("select split_part(version(), ' on ', 1) as version");
    const report: DeveloperAreaBenchReport = {
      command: "npm run bench:developer-area",
      date: new Date().toISOString().slice(0, 10),
      machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? "CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}`,
      postgres: `${version!.version} (${postgres.kind})`,
      deliveries: settings.deliveries,
      otherDeliveries: settings.otherDeliveries,
      endpoints: settings.endpoints,
      requestsPerPage: settings.requests,
      warmup: settings.warmup,
      targetMs: settings.targetMs,
      results,
    };
    console.log(`\n${consoleTable(report)}\n`);
    if (reportTarget !== "-") {
      await writeSection(reportTarget, report);
      console.log(`wrote ${reportTarget}`);
    }
  } finally {
    await admin.end();
    await db.dispose();
    await postgres.stop();
  }
};

/** The scans between two readings. */
const difference = (before: ReadonlyArray<ScanCounts>, after: ReadonlyArray<ScanCounts>): ScanCounts[] =>
  after.map((row) => {
    const earlier = before.find((candidate) => candidate.table === row.table)!;
    return { table: row.table, seqScans: row.seqScans - earlier.seqScans, indexScans: row.indexScans - earlier.indexScans };
  });

const scanCounts = async (query: <Row extends pg.QueryResultRow>(text: string, params?: unknown[]) => Promise<Row[]>): Promise<ScanCounts[]> =>
  (await query<{ table: string; seq: string; idx: string }>(
    "select relname as table, seq_scan as seq, coalesce(idx_scan, 0) as idx from pg_stat_user_tables where relname = any($1) order by relname",
    [LOG_TABLES],
  )).map((row) => ({ table: row.table, seqScans: Number(row.seq), indexScans: Number(row.idx) }));

await main();
