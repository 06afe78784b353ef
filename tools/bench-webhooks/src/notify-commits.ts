import pg from "pg";
import { DELIVERIES_NOTIFY, deliveryWaker } from "@platter/persistence/dispatcher";
import { startTestPostgres } from "@platter/testing";

/**
 * What waking the dispatchers costs the writers' commits (issue 32's soak): 32 connections each commit
 * a one-row insert as fast as they can for `SECONDS`, in a durable PostgreSQL of its own, with no
 * NOTIFY, with a NOTIFY inside each transaction (the trigger Platter had), and with the NOTIFY after
 * each commit coalesced per process (`deliveryWaker`, what Platter does). Modes alternate, twice.
 * Run: `npm run bench:notify-commits`.
 */

const CONNECTIONS = 32;
const SECONDS = 8;
type Mode = "no NOTIFY" | "NOTIFY in the transaction" | "NOTIFY after the commit, coalesced";

const postgres = await startTestPostgres({ durable: true });
const admin = new pg.Client({ connectionString: postgres.adminUrl });
await admin.connect();
await admin.query("create table commits (id bigserial primary key, at timestamptz not null default now())");
const pool = new pg.Pool({ connectionString: postgres.adminUrl, max: 2 });

const run = async (mode: Mode) => {
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    const client = new pg.Client({ connectionString: postgres.adminUrl });
    await client.connect();
    return client;
  }));
  let notifies = 0;
  const wake = deliveryWaker(() => (notifies++, pool.query(DELIVERIES_NOTIFY)));
  let commits = 0;
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(clients.map(async (client) => {
    while (Date.now() < end) {
      await client.query("begin");
      await client.query("insert into commits default values");
      if (mode === "NOTIFY in the transaction") await client.query("select pg_notify('platter_deliveries', '')");
      await client.query("commit");
      if (mode === "NOTIFY after the commit, coalesced") wake();
      commits++;
    }
  }));
  await Promise.all(clients.map((client) => client.end()));
  console.log(`| ${mode} | ${Math.round(commits / SECONDS)} | ${mode === "NOTIFY after the commit, coalesced" ? Math.round(notifies / SECONDS) : mode === "no NOTIFY" ? 0 : Math.round(commits / SECONDS)} |`);
};

console.log(`${CONNECTIONS} connections, ${SECONDS} s each, durable PostgreSQL\n\n| mode | commits/s | NOTIFYs/s |\n|---|---|---|`);
for (let round = 0; round < 2; round++) {
  for (const mode of ["no NOTIFY", "NOTIFY in the transaction", "NOTIFY after the commit, coalesced"] as const) await run(mode);
}
await pool.end();
await admin.end();
await postgres.stop();
