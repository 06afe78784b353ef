import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { createServer, type Server } from "node:http";
import { createDeveloperAreaApp } from "@platter/developer-area";
import { endpointSecretContext, generateSecretKey, makeSecretCipher } from "@platter/domain";
import { createOrganization, createSandbox, createTestDatabase, freePort, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { verifyWebhook } from "@platter/sdk";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, watchCli, type WatchedCli } from "./cli-process.ts";

/**
 * `platter listen` and `platter trigger <type>` with an API key, as real processes against a real
 * Developer area on 127.0.0.1: each triggered event reaches a local receiver, which verifies it with
 * the SDK's `verifyWebhook` and the secret the ready line printed; the listen process prints its line,
 * and the answer (200, or 500) is the recorded attempt, checked in SQL. The key-mode trigger's
 * refusals, a refused or lost connection, a takeover by a second listen, and every usage error
 * (exit 2, before anything connects) are tested too. Neither command reads the database settings:
 * their processes run with a `DATABASE_URL` that would stop any command reading it.
 */

/** A `DATABASE_URL` no command can read without failing at once: proof that these commands never look at it. */
const UNREADABLE_DATABASE = "not-a-database-url";
const UNKNOWN_KEY = `platter_test_rw_${"0".repeat(64)}`;

let db: TestDatabase;
let live: OrganizationFixture;
let sandbox: OrganizationFixture;
let areaOrigin: string;
let area: Server;
let dropConnections: () => void;
let endStreams: (() => void) | undefined;

/** What the local receiver got: each request verified with the secret the ready line printed. */
interface Received {
  readonly type: string;
  readonly id: string;
  readonly userAgent: string | undefined;
}
let receiver: Server;
let receiverUrl: string;
let secret = "";
let answer = 200;
/** How long the receiver takes to answer, and how many requests it holds now and held at most at once. */
let answerDelayMs = 0;
let holding = 0;
let mostHeld = 0;
const received: Received[] = [];
const unverified: string[] = [];

const processes: ChildProcessWithoutNullStreams[] = [];

const close = (server: Server | undefined) =>
  new Promise<void>((done) => {
    if (server === undefined) return done();
    server.closeAllConnections();
    server.close(() => done());
  });

const listenOn = async (server: Server): Promise<string> => {
  const port = await freePort();
  await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));
  return `http://127.0.0.1:${port}`;
};

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  live = await createOrganization(db, "Listening Kitchen");
  sandbox = await createSandbox(db, live);
  const port = await freePort();
  areaOrigin = `http://127.0.0.1:${port}`;
  const app = createDeveloperAreaApp(db.runtime, { developerAreaUrl: areaOrigin, frameAncestors: "'self'" }, pino({ level: "silent" }));
  endStreams = () => app.listenerStreams.endAll();
  area = createServer(app.callback());
  // The connections cut under the CLI, as a network drop or a crashed instance would (a stopping one refuses new streams instead).
  dropConnections = () => area.closeAllConnections();
  await new Promise<void>((done) => area.listen(port, "127.0.0.1", done));

  receiver = createServer(async (req, res) => {
    holding++;
    mostHeld = Math.max(mostHeld, holding);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      const event = await verifyWebhook(Buffer.concat(chunks), req.headers, secret);
      received.push({ type: event.type, id: event.id, userAgent: req.headers["user-agent"] });
    } catch (error) {
      unverified.push(String(error));
    }
    if (answerDelayMs > 0) await new Promise((resume) => setTimeout(resume, answerDelayMs));
    holding--;
    res.writeHead(answer, { "content-type": "text/plain" }).end(answer === 200 ? "ok" : "boom");
  });
  receiverUrl = `${await listenOn(receiver)}/hook`;
});

afterAll(async () => {
  for (const child of processes) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  endStreams?.();
  await close(area);
  await close(receiver);
  await db?.dispose();
});

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** The environment of a key command: no key unless given, and database settings no command could use. */
const keyEnv = (extra: Record<string, string> = {}) => ({ DATABASE_URL: UNREADABLE_DATABASE, PLATTER_API_KEY: "", PLATTER_DEVELOPER_AREA_URL: "", ...extra });

/** Waits until `condition` holds, failing after `ms` with `what`. */
const until = async (what: string, condition: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resume) => setTimeout(resume, 25));
  }
};

/** Starts `platter listen` as a process forwarding to the receiver (or `forwardTo`) with `key`; `args` are added. */
const startListen = (key: string, args: readonly string[] = [], origin = areaOrigin, forwardTo = receiverUrl): WatchedCli => {
  const listening = watchCli(["listen", "--forward-to", forwardTo, "--api-key", key, "--developer-area-url", origin, ...args], keyEnv());
  processes.push(listening.child);
  return listening;
};

const READY = /^Ready\. Forwarding deliveries to (\S+) \(listener (\d+); every event type\)\. Signing secret: (whsec_\S+)$/m;

/** `platter trigger <type>` with `key` (key mode: no --org), as a process. */
const triggerWithKey = (type: string, key: string, json = true) =>
  runCli(["trigger", type, "--api-key", key, "--developer-area-url", areaOrigin, ...(json ? ["--json"] : [])], keyEnv());

/** The deliveries of listener endpoint `listenerId`, with their attempts' status codes. */
const deliveriesOf = (listenerId: number) =>
  rows<{ message_id: string; type: string; status: string; via_listener: boolean; codes: Array<number | null>; errors: Array<string | null> }>(
    `select m.envelope_id as message_id, m.type, d.status, d.via_listener,
       coalesce((select array_agg(a.status_code order by a.id) from webhook_attempts a where a.delivery_id = d.id), '{}') as codes,
       coalesce((select array_agg(a.error order by a.id) from webhook_attempts a where a.delivery_id = d.id), '{}') as errors
     from webhook_deliveries d join webhook_messages m on m.id = d.message_id where d.endpoint_id = ? order by d.id`,
    [listenerId],
  );

const messagesIn = async (organizationId: number) =>
  (await rows<{ count: number }>("select count(*)::int as count from webhook_messages where organization_id = ?", [organizationId]))[0]!.count;

describe("platter listen with platter trigger by key", () => {
  let listening: WatchedCli;
  let listenerId: number;

  it("forwards a triggered delivery to the local URL signed as sent, prints its line, and records the local 200 as the attempt", async () => {
    listening = startListen(sandbox.writeKey);
    await until("the ready line", () => READY.test(listening.stdout()));
    const [, forwardTo, listener, printedSecret] = READY.exec(listening.stdout())!;
    expect(forwardTo).toBe(receiverUrl);
    secret = printedSecret!;
    listenerId = Number(listener);
    expect(await rows("select url, listener_key_id from webhook_endpoints where id = ?", [listenerId]))
      .toEqual([{ url: receiverUrl, listener_key_id: String(sandbox.writeKeyId) }]);

    const triggered = await triggerWithKey("client.created", sandbox.writeKey);
    expect(triggered).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(triggered.stdout)).toEqual({ type: "client.created", subject: expect.stringMatching(/^client \d+$/) });

    await until("the receiver to verify a client.created", () => received.some((event) => event.type === "client.created"));
    expect(unverified).toEqual([]);
    const delivered = received.find((event) => event.type === "client.created")!;
    expect(delivered.userAgent).toMatch(/platter/i);
    const line = new RegExp(`^\\d{2}:\\d{2}:\\d{2}  client\\.created  ${delivered.id}  -> 200  \\(\\d+ ms\\)$`, "m");
    await until("the delivery's line", () => line.test(listening.stdout()));
    await expect.poll(() => deliveriesOf(listenerId), { timeout: 10_000 })
      .toEqual([{ message_id: delivered.id, type: "client.created", status: "succeeded", via_listener: true, codes: [200], errors: [null] }]);
  });

  it("prints a local 500 as such and records it as a failed attempt", async () => {
    answer = 500;
    try {
      const triggered = await triggerWithKey("event.created", sandbox.writeKey, false);
      expect(triggered.code).toBe(0);
      expect(triggered.stdout).toMatch(/^event\.created: event \d+\n$/);
      await until("the receiver to verify an event.created", () => received.some((event) => event.type === "event.created"));
      const delivered = received.find((event) => event.type === "event.created")!;
      await until("the delivery's -> 500 line", () => new RegExp(`  event\\.created  ${delivered.id}  -> 500  \\(\\d+ ms\\)$`, "m").test(listening.stdout()));
      await expect.poll(async () => (await deliveriesOf(listenerId)).find((delivery) => delivery.message_id === delivered.id), { timeout: 10_000 })
        .toMatchObject({ message_id: delivered.id, type: "event.created", status: "failed", via_listener: true, codes: [500] });
    } finally {
      answer = 200;
    }
    expect(unverified).toEqual([]);
  });

  it.each([
    ["a live organization's key", () => live.writeKey, "This organization is not a sandbox"],
    ["a sandbox's read-only key", () => sandbox.readKey, "This API key is read-only"],
    ["an unknown key", () => UNKNOWN_KEY, "Missing, malformed or revoked API key"],
  ])("refuses a trigger with %s: the Developer area's sentence, exit 1, nothing written", async (_what, key, sentence) => {
    const before = [await messagesIn(live.id), await messagesIn(sandbox.id)];
    const result = await runCliFailing(["trigger", "invoice.paid", "--api-key", key(), "--developer-area-url", areaOrigin], keyEnv());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^platter: [^\n]+\n$/);
    expect(result.stderr).toContain(`platter: ${sentence}`);
    expect([await messagesIn(live.id), await messagesIn(sandbox.id)]).toEqual(before);
  });

  it.each([
    ["an unknown key", () => UNKNOWN_KEY, "Missing, malformed or revoked API key"],
    // A listener is an endpoint the key adds, fed payloads the read API does not show: read/write keys only.
    ["a read-only key", () => sandbox.readKey, "This API key is read-only"],
  ])("ends with exit 1 and the area's sentence when %s is refused on connecting (no reconnection)", async (_what, key, sentence) => {
    const refused = startListen(key());
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toBe(`platter: ${sentence}\n`);
    expect(refused.stdout()).toBe("");
  });

  it("ends the first listen (exit 1) when a second one with the same key takes over; --json prints one object per line; SIGTERM exits 0", async () => {
    const second = startListen(sandbox.writeKey, ["--json", "--events", "client.created"]);
    expect(await listening.exited).toBe(1);
    expect(listening.stderr()).toContain("platter: Another platter listen with this key took over");
    await until("the second listen's ready object", () => second.stdout().includes("\n"));
    expect(JSON.parse(second.stdout().split("\n")[0]!)).toEqual({
      kind: "ready", listener_id: listenerId, secret, forward_to: receiverUrl, events: ["client.created"], took_over: true,
    });
    expect(second.stderr()).toContain("Another platter listen with this key was connected: it has been stopped, and this one gets the deliveries now\n");

    expect((await triggerWithKey("client.created", sandbox.writeKey)).code).toBe(0);
    await until("a delivery object", () => second.stdout().split("\n").filter((line) => line !== "").length === 2);
    const delivery = JSON.parse(second.stdout().split("\n")[1]!);
    expect(delivery).toEqual({
      kind: "delivery", type: "client.created", message_id: expect.any(String), delivery_id: expect.any(Number), status: 200, error: null,
      duration_ms: expect.any(Number),
    });
    expect(received.map((event) => event.id)).toContain(delivery.message_id);
    await expect.poll(async () => (await deliveriesOf(listenerId)).find((row) => row.message_id === delivery.message_id)?.codes, { timeout: 10_000 }).toEqual([200]);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(unverified).toEqual([]);
  });

  it("forwards deliveries concurrently, and on SIGINT waits for the forwards in flight to be answered and recorded before exiting 0", async () => {
    const third = startListen(sandbox.writeKey);
    await until("the ready line", () => READY.test(third.stdout()));
    answerDelayMs = 2_500;
    mostHeld = 0;
    const before = received.length;
    try {
      const triggers = await Promise.all([triggerWithKey("event.created", sandbox.writeKey), triggerWithKey("client.created", sandbox.writeKey)]);
      expect(triggers.map((trigger) => trigger.code)).toEqual([0, 0]);
      // Both are at the receiver at once: the second was forwarded while the first was still unanswered.
      await until("two forwards held by the receiver at once", () => holding === 2);
      third.child.kill("SIGINT");
      expect(await third.exited).toBe(0);
    } finally {
      answerDelayMs = 0;
    }
    expect(mostHeld).toBe(2);
    const forwarded = received.slice(before);
    expect(forwarded.map((event) => event.type).sort()).toEqual(["client.created", "event.created"]);
    for (const event of forwarded) {
      expect(third.stdout()).toMatch(new RegExp(`  ${event.type.replace(".", "\\.")}  ${event.id}  -> 200  \\(\\d+ ms\\)$`, "m"));
      expect((await deliveriesOf(listenerId)).find((row) => row.message_id === event.id)).toMatchObject({ status: "succeeded", codes: [200] });
    }
  });

  it("reconnects when its connection to the Developer area is cut, and goes on forwarding on the new one", async () => {
    const again = startListen(sandbox.writeKey);
    await until("the ready line", () => READY.test(again.stdout()));
    dropConnections();
    await until("the reconnection", () => again.stderr().includes(`Reconnected to ${areaOrigin} (listener ${listenerId})`));
    expect(again.stderr()).toMatch(new RegExp(`Connection to ${areaOrigin} lost \\([^)]+\\); reconnecting in 1s\\n`));
    // The same listener and secret: the ready line is not printed again.
    expect(again.stdout().match(new RegExp(READY.source, "gm"))).toHaveLength(1);
    expect((await triggerWithKey("invoice.sent", sandbox.writeKey)).code).toBe(0);
    await until("the receiver to verify an invoice.sent", () => received.some((event) => event.type === "invoice.sent"));
    const delivered = received.find((event) => event.type === "invoice.sent")!;
    await until("the delivery's line", () => again.stdout().includes(`  invoice.sent  ${delivered.id}  -> 200  (`));
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
    expect((await deliveriesOf(listenerId)).find((row) => row.message_id === delivered.id)).toMatchObject({ status: "succeeded", codes: [200] });
  });

  it("prints and records a local URL that refuses the connection as an error with no status", async () => {
    const port = await freePort();
    const closed = startListen(sandbox.writeKey, [], areaOrigin, `http://127.0.0.1:${port}/hook`);
    await until("the ready line", () => READY.test(closed.stdout()));
    expect((await triggerWithKey("client.created", sandbox.writeKey)).code).toBe(0);
    const line = new RegExp(`^\\d{2}:\\d{2}:\\d{2}  client\\.created  (evt_\\S+)  -> error: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}  \\(\\d+ ms\\)$`, "m");
    await until("the error line", () => line.test(closed.stdout()));
    const messageId = line.exec(closed.stdout())![1]!;
    await expect.poll(async () => (await deliveriesOf(listenerId)).find((row) => row.message_id === messageId), { timeout: 10_000 })
      .toMatchObject({ status: "failed", codes: [null], errors: [`connect ECONNREFUSED 127.0.0.1:${port}`] });
    closed.child.kill("SIGTERM");
    expect(await closed.exited).toBe(0);
  });
});

describe("platter listen when the Developer area's settings refuse it (503 without Retry-After)", () => {
  // The listener's secret sealed with a key this area does not hold (a process elsewhere had it first, mid-rotation): the
  // area answers 503 SecretKeyUnavailable with no Retry-After. Its operator must change its settings; waiting changes nothing.
  const elsewhere = makeSecretCipher([generateSecretKey("elsewhere").key]);
  const UNHELD = 'platter: This signing secret was sealed with key "elsewhere", which this server does not hold';
  /** The end of the line: the sentence said to be the area's settings (set at run time: the area's origin is known then). */
  const settingsOf = (origin: string) => `(HTTP 503 from the Developer area at ${origin}, without Retry-After: its operator's settings, so trying again would not help until they change)\n`;

  it("stops with exit 1 and the area's sentence, said to be its settings, after one reconnection (no retries), and refuses a new listen at once", async () => {
    const org = await createOrganization(db, "Unkeyed Listeners");
    const connected = startListen(org.writeKey);
    await until("the ready line", () => READY.test(connected.stdout()));
    const [, , listener, printedSecret] = READY.exec(connected.stdout())!;
    await rows("update webhook_endpoints set secret = ? where id = ?",
      [elsewhere.seal(printedSecret!, endpointSecretContext(org.id, Number(listener))), Number(listener)]);
    dropConnections();
    expect(await connected.exited).toBe(1);
    const settings = settingsOf(areaOrigin);
    expect(connected.stderr()).toMatch(new RegExp(`Connection to ${areaOrigin} lost \\([^)]+\\); reconnecting in 1s\n`));
    expect(connected.stderr().match(/reconnecting/g)).toHaveLength(1);
    expect(connected.stderr()).toContain(UNHELD);
    expect(connected.stderr().endsWith(settings)).toBe(true);

    const refused = startListen(org.writeKey);
    expect(await refused.exited).toBe(1);
    expect(refused.stdout()).toBe("");
    expect(refused.stderr().startsWith(UNHELD)).toBe(true);
    expect(refused.stderr().endsWith(settings)).toBe(true);
    expect(refused.stderr()).not.toContain("reconnecting");
  });
});

describe("platter listen without a Developer area", () => {
  it("says at once that the Developer area cannot be reached when it never connected (exit 1, no retries)", async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const never = startListen(sandbox.writeKey, [], nowhere);
    expect(await never.exited).toBe(1);
    expect(never.stderr()).toMatch(new RegExp(`^platter: cannot reach the Developer area at ${nowhere} \\(connect ECONNREFUSED [^)]+\\)\\n$`));
    expect(never.stdout()).toBe("");
  });

  it.each([
    ["no --forward-to", ["listen", "--api-key", UNKNOWN_KEY], "Missing required argument: --forward-to"],
    ["a --forward-to that is not a URL", ["listen", "--forward-to", "localhost-4000", "--api-key", UNKNOWN_KEY], "--forward-to: Enter a full URL"],
    ["a --forward-to that is not http(s)", ["listen", "--forward-to", "ftp://localhost/hook", "--api-key", UNKNOWN_KEY], "--forward-to: The URL must start with https://"],
    ["an empty --events", ["listen", "--forward-to", "http://localhost:4000/hook", "--events", ",", "--api-key", UNKNOWN_KEY],
      "--events: name at least one event type, or leave --events out for every type"],
    ["an option listen does not have", ["listen", "--forward-to", "http://localhost:4000/hook", "--org", "2", "--api-key", UNKNOWN_KEY], "unknown option --org"],
    ["an unknown event type", ["listen", "--forward-to", "http://localhost:4000/hook", "--events", "event.created,invoice.void", "--api-key", UNKNOWN_KEY],
      "--events: unknown event type \"invoice.void\""],
    ["no API key", ["listen", "--forward-to", "http://localhost:4000/hook"], "an API key is required: pass --api-key or set PLATTER_API_KEY"],
    ["a --developer-area-url with a path", ["listen", "--forward-to", "http://localhost:4000/hook", "--api-key", UNKNOWN_KEY, "--developer-area-url", "http://127.0.0.1:1/area"],
      "--developer-area-url must be an http(s) address without a path"],
    ["a trigger with no key and no --org", ["trigger", "invoice.paid"], "an API key is required: pass --api-key or set PLATTER_API_KEY"],
    ["a trigger with both a key and --org", ["trigger", "invoice.paid", "--org", "1", "--api-key", UNKNOWN_KEY], "--api-key is for a trigger with an API key: give it or --org, not both"],
    ["a trigger of an unknown type by key", ["trigger", "invoice.void", "--api-key", UNKNOWN_KEY], "type must be one of event.created"],
  ])("refuses %s as a usage error (exit 2) before connecting or reading the database settings", async (_what, args, message) => {
    // The Developer area named is one nothing listens on: a command that tried to connect would not end like this.
    const result = await runCliFailing(args, keyEnv({ PLATTER_DEVELOPER_AREA_URL: "http://127.0.0.1:1" }));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain("DATABASE_URL");
    expect(result.stderr).not.toContain("reconnecting");
  });
});
