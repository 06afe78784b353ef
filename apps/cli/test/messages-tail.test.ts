import { createServer, type Server } from "node:http";
import { Clients, Events } from "@platter/application";
import { apiKeyActor } from "@platter/domain";
import { createDeveloperAreaApp } from "@platter/developer-area";
import { createOrganization, createTestDatabase, freePort, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, watchCli, type WatchedCli } from "./cli-process.ts";

/**
 * `platter messages tail` end to end: the CLI as a process with an API key (no database) against the
 * real Developer area on 127.0.0.1. It prints the organization's messages oldest first, follows new
 * ones, stops on SIGINT with exit 0 printing the cursor to resume from; resumed from that cursor it
 * prints only what came since (no gap, no repeat); `--events` filters; `--json` prints each with its
 * cursor and envelope; bad input is exit 2 and a refused key (unknown, read-only) exit 1.
 */

const UNREADABLE_DATABASE = "not-a-database-url";

let db: TestDatabase;
let org: OrganizationFixture;
let area: Server;
let areaOrigin: string;
const processes: WatchedCli[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Tailing Kitchen");
  const port = await freePort();
  areaOrigin = `http://127.0.0.1:${port}`;
  const app = createDeveloperAreaApp(db.runtime, { developerAreaUrl: areaOrigin, frameAncestors: "'self'" }, pino({ level: "silent" }));
  area = createServer(app.callback());
  await new Promise<void>((done) => area.listen(port, "127.0.0.1", done));
});

afterAll(async () => {
  for (const watched of processes) if (watched.child.exitCode === null && watched.child.signalCode === null) watched.child.kill("SIGKILL");
  area?.closeAllConnections();
  await new Promise((done) => area?.close(done));
  await db?.dispose();
});

const keyEnv = { DATABASE_URL: UNREADABLE_DATABASE, PLATTER_API_KEY: "", PLATTER_DEVELOPER_AREA_URL: "" };
const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const envelopes = async (after = 0) =>
  (await rows<{ envelope_id: string }>("select envelope_id from webhook_messages where organization_id = ? and id > ? order by created_at, id", [org.id, after]))
    .map((row) => row.envelope_id);
const lastId = async () => Number((await rows<{ id: string }>("select coalesce(max(id), 0) as id from webhook_messages where organization_id = ?", [org.id]))[0]!.id);

/** Waits until `condition` holds, failing after `ms` with `what`. */
const until = async (what: string, condition: () => boolean, ms = 20_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resume) => setTimeout(resume, 25));
  }
};

const tail = (args: readonly string[] = []): WatchedCli => {
  const watched = watchCli(["messages", "tail", "--api-key", org.writeKey, "--developer-area-url", areaOrigin, ...args], keyEnv);
  processes.push(watched);
  return watched;
};

/** The envelope ids of the human lines printed (`<time>  <type>  <id>  <body>`). */
const printedIds = (stdout: string) => stdout.split("\n").filter((line) => line !== "").map((line) => line.split("  ")[2]!);

describe("platter messages tail", () => {
  it("prints the messages, follows new ones, stops on SIGINT with the cursor, and resumes from it with no gap and no repeat", async () => {
    const actor = apiKeyActor(org.scope);
    for (const name of ["Ada", "Grace"]) await db.run(Clients.create(actor, { name }));
    const first = tail();
    await until("the first two messages", () => printedIds(first.stdout()).length === 2);
    await db.run(Events.create(actor, { name: "Harvest supper" }));
    await until("the new message", () => printedIds(first.stdout()).length === 3);
    expect(printedIds(first.stdout())).toEqual(await envelopes());
    const [line] = first.stdout().split("\n");
    const [, type, id, body] = line!.split("  ");
    expect(type).toBe("client.created");
    expect(JSON.parse(body!)).toMatchObject({ id, type: "client.created", data: { name: "Ada" } });

    first.child.kill("SIGINT");
    expect(await first.exited).toBe(0);
    const cursor = /Resume with: platter messages tail --after (\S+)/.exec(first.stderr())?.[1];
    expect(cursor).toBeDefined();

    // While it was stopped: two more.
    const seen = await lastId();
    await db.run(Clients.create(actor, { name: "Edsger" }));
    await db.run(Events.create(actor, { name: "Winter gala" }));
    const resumed = tail(["--after", cursor!, "--json"]);
    await until("the two missed messages", () => resumed.stdout().split("\n").filter((l) => l !== "").length === 2);
    const printed = resumed.stdout().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    expect(printed.map((m) => m.id)).toEqual(await envelopes(seen));
    for (const message of printed) {
      expect(message).toMatchObject({ kind: "message", id: message.envelope.id, type: message.envelope.type, cursor: expect.any(String) });
      expect(JSON.parse(message.body)).toEqual(message.envelope);
    }
    resumed.child.kill("SIGINT");
    expect(await resumed.exited).toBe(0);
    expect(resumed.stderr()).toContain(`--after ${printed.at(-1).cursor}`);
  });

  it("prints only the event types asked for", async () => {
    const events = await rows<{ envelope_id: string }>("select envelope_id from webhook_messages where organization_id = ? and type = 'event.created' order by created_at, id", [org.id]);
    expect(events.length).toBe(2);
    const filtered = tail(["--events", "event.created"]);
    await until("the event messages", () => printedIds(filtered.stdout()).length === 2);
    filtered.child.kill("SIGINT");
    expect(await filtered.exited).toBe(0);
    expect(printedIds(filtered.stdout())).toEqual(events.map((row) => row.envelope_id));
  });

  it.each<[string, readonly string[], RegExp]>([
    ["an unknown event type", ["--events", "invoice.deleted"], /--events: unknown event type "invoice.deleted"/],
    ["a since that is not a time", ["--since", "yesterday"], /--since must be a time/],
    ["both --after and --since", ["--after", "abc", "--since", "2026-11-01T00:00"], /give one place to start/],
  ])("refuses %s with exit 2", async (_case, args, message) => {
    const result = await runCliFailing(["messages", "tail", "--api-key", org.writeKey, "--developer-area-url", areaOrigin, ...args], keyEnv);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it("says a cursor the area refuses (exit 2), and a key it does not know or a read-only one (exit 1), at once", async () => {
    const badCursor = await runCli(["messages", "tail", "--api-key", org.writeKey, "--developer-area-url", areaOrigin, "--after", "not-a-cursor"], keyEnv);
    expect(badCursor.code).toBe(2);
    expect(badCursor.stderr).toMatch(/cursor/);
    const unknownKey = await runCli(["messages", "tail", "--api-key", "platter_rw_unknownkey", "--developer-area-url", areaOrigin], keyEnv);
    expect(unknownKey.code).toBe(1);
    expect(unknownKey.stdout).toBe("");
    const readOnly = await runCli(["messages", "tail", "--api-key", org.readKey, "--developer-area-url", areaOrigin], keyEnv);
    expect(readOnly.code).toBe(1);
    expect(readOnly.stdout).toBe("");
  });
});
