import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { envelopeBody, signPayload, standardWebhookSignature } from "@platter/domain";
import { createDeveloperAreaApp } from "@platter/developer-area";
import { freePort } from "@platter/testing";
import { attemptDelivery, type AttemptSettings, createDeliveryAgent } from "@platter/webhooks";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { seedRecordsWithChildren, type SdkTestbed, startSdkTestbed } from "./sdk-testbed.ts";

/**
 * The README's code is real code: every ```ts block is a file under examples/, byte for byte,
 * and the examples run as integrators would run them (their own Node process, importing
 * `@platter/sdk`) against the live test API. The webhook receivers get deliveries made by the
 * dispatcher's own code: the outbox row of a real create, `envelopeBody`, and `attemptDelivery`
 * (which signs and POSTs). Express is not installed here: its example is only compared with its file.
 */

const SDK_ROOT = fileURLToPath(new URL("..", import.meta.url));
const EXAMPLE_MARKER = /<!-- example: (examples\/[\w.-]+\.ts) -->\n```ts\n([\s\S]*?)```/g;

let bed: SdkTestbed;
let seeded: Awaited<ReturnType<typeof seedRecordsWithChildren>>;
beforeAll(async () => {
  bed = await startSdkTestbed();
  seeded = await seedRecordsWithChildren(bed.sql, bed.org.id);
});
afterAll(() => bed?.close());

const exampleEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  PLATTER_API_KEY: bed.org.writeKey,
  PLATTER_READ_ONLY_KEY: bed.org.readKey,
  PLATTER_BASE_URL: bed.baseUrl,
  ...extra,
});

/** Runs an example to completion in its own Node process; answers its output. */
const runExample = async (file: string, extra: Record<string, string> = {}): Promise<string> => {
  const { stdout } = await promisify(execFile)(process.execPath, ["--conditions=@platter/source", file], {
    cwd: SDK_ROOT,
    env: exampleEnv(extra),
  });
  return stdout;
};

describe("README code blocks", () => {
  it("are each an example file, verbatim, and every example file is in the README", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const embedded = [...readme.matchAll(EXAMPLE_MARKER)];
    expect(embedded.length, "the README has example blocks to compare").toBeGreaterThan(0);
    expect(embedded.length, "every ```ts block is preceded by <!-- example: examples/… -->").toBe(readme.split("```ts\n").length - 1);
    for (const [, file, code] of embedded) {
      expect(code, `README block of ${file}`).toBe(await readFile(new URL(`../${file}`, import.meta.url), "utf8"));
    }
    const files = (await readdir(new URL("../examples", import.meta.url))).filter((f) => f.endsWith(".ts")).map((f) => `examples/${f}`);
    expect(embedded.map(([, file]) => file).sort()).toEqual(files.sort());
  });
});

describe("client examples against the live API", () => {
  it("quick-start.ts connects, creates an event and lists events", async () => {
    const output = await runExample("examples/quick-start.ts");
    expect(output).toMatch(/^Connected to SDK Catering \(EUR\)\nCreated event \d+: Spring gala, inquiry\n/);
    expect(output).toContain("2027-04-17  Spring gala");
    expect(output).toContain("2027-06-19  Summer wedding");
  });

  it("methods.ts calls every method", async () => {
    const output = await runExample("examples/methods.ts");
    expect(output).toContain("organization: SDK Catering");
    expect(output).toMatch(/event \d+: Hochzeit Müller \(inquiry\), \d+ listed/);
    expect(output).toContain("first: Lemon tart with 2 ingredients");
    expect(output).toMatch(/client \d+ created, \d+ clients/);
    expect(output).toContain("newest: INV-0001 total");
  });

  it("pagination.ts walks, pages, takes the first few and resumes from a cursor", async () => {
    await bed.sql(
      `insert into clients (organization_id, name) select ?, 'Paged ' || lpad(n::text, 4, '0') from generate_series(1, 650) as n`,
      [bed.org.id],
    );
    const [row] = await bed.sql<{ count: string }>("select count(*) from clients where organization_id = ?", [bed.org.id]);
    const total = Number(row!.count);
    const output = await runExample("examples/pagination.ts");
    expect(output).toContain(`page of 500, more: true\npage of ${total - 500}, more: false`);
    expect(output).toContain(`after the first 100: ${total - 100} more`);
    expect(output).toMatch(/newest event: \S/);
  });

  it("errors.ts tells the errors apart", async () => {
    const output = await runExample("examples/errors.ts");
    expect(output).toMatch(/^no such record \(status 404, request \S+\)\nrejected: name must not be empty\nthis key is read-only\n$/);
  });

  it("manifest.ts prints an event's dishes with their allergens and the flags every dish has", async () => {
    const output = await runExample("examples/manifest.ts", { EVENT_ID: String(seeded.eventId) });
    expect(output).toBe(
      "Summer wedding, 2027-06-19\ndessert: 80 × Lemon tart (eggs, milk, gluten)\nallergens: eggs, gluten, milk; every dish: vegetarian\n",
    );
  });

  it("retries-and-idempotency.ts answers the same event when run again with the same order number", async () => {
    const first = await runExample("examples/retries-and-idempotency.ts", { ORDER_NUMBER: "8812" });
    const second = await runExample("examples/retries-and-idempotency.ts", { ORDER_NUMBER: "8812" });
    expect(first).toMatch(/^event for order 8812: \d+\n$/);
    expect(second).toBe(first);
    const stored = await bed.sql("select id from events where organization_id = ? and name = 'Lunch for order 8812'", [bed.org.id]);
    expect(stored).toHaveLength(1);
  });
});

/** A receiver example running in its own process, and its output so far. */
interface RunningReceiver {
  readonly url: string;
  /** Waits until the receiver has printed `line` (its output arrives through a pipe, after its HTTP answer). */
  readonly printed: (line: string) => Promise<void>;
  readonly stop: () => Promise<void>;
}

const startReceiver = async (file: string, secret: string): Promise<RunningReceiver> => {
  const child: ChildProcess = spawn(process.execPath, ["--conditions=@platter/source", file], {
    cwd: SDK_ROOT,
    env: { ...process.env, PORT: "0", PLATTER_WEBHOOK_SECRET: secret },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const url = await new Promise<string>((done, fail) => {
    const check = () => {
      const match = /listening on (\S+)/.exec(output);
      if (match) done(match[1]!);
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => fail(new Error(`${file} exited with ${code}: ${output}`)));
  });
  return {
    url,
    printed: (line) => vi.waitFor(() => expect(output).toContain(line), { timeout: 10_000 }),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once("exit", done));
      child.kill();
      await exited;
    },
  };
};

describe.each(["examples/webhook-node-http.ts", "examples/webhook-koa.ts"])("%s", (file) => {
  const SECRET = "whsec_example_0123456789abcdef";
  const settings: AttemptSettings = { signatureHeader: "x-platter-signature", timeoutMs: 5_000, allowPrivateNetworks: true };
  const agent = createDeliveryAgent(settings);
  let receiver: RunningReceiver;
  let body: string;
  let envelopeId: string;

  beforeAll(async () => {
    receiver = await startReceiver(file, SECRET);
    // A real create through the API writes the outbox row the dispatcher would deliver.
    const name = `Webhook client ${file}`;
    await bed.platter().clients.create({ name });
    const [row] = await bed.sql<{ envelope_id: string; type: string; payload: unknown; created_at: Date }>(
      "select envelope_id, type, payload, created_at from webhook_messages where organization_id = ? and payload->'data'->>'name' = ?",
      [bed.org.id, name],
    );
    envelopeId = row!.envelope_id;
    body = envelopeBody({ envelopeId, type: row!.type, createdAt: new Date(row!.created_at).toISOString(), payload: row!.payload })!;
  });
  afterAll(async () => {
    await receiver?.stop();
    await agent.close();
  });

  const deliver = (secret: string, bytes = body) =>
    attemptDelivery(
      agent,
      { id: 1, organizationId: bed.org.id, endpointId: 1, url: receiver.url, origin: new URL(receiver.url).origin, secret, envelopeId, body: bytes, attempt: 1, leaseToken: "t", probe: false, createdAt: new Date().toISOString() },
      settings,
    );

  it("acknowledges a delivery signed with the endpoint's secret", async () => {
    const result = await deliver(SECRET);
    expect(result.statusCode).toBe(204);
    expect(result.outcome).toBe("succeeded");
    await receiver.printed(`received client.created ${envelopeId}: Webhook client ${file}`);
  });

  it("rejects a delivery signed with another secret with 400", async () => {
    expect((await deliver("whsec_someone_else")).statusCode).toBe(400);
    await receiver.printed("rejected: Webhook signature does not match the body and secret");
  });

  it("rejects a tampered body, a missing signature, and a captured delivery without its webhook-* headers with 400", async () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const tampered = await fetch(receiver.url, {
      method: "POST",
      headers: {
        "content-type": "application/json", "webhook-id": envelopeId, "webhook-timestamp": String(timestamp),
        "webhook-signature": standardWebhookSignature(SECRET, envelopeId, timestamp, body),
      },
      body: body.replace("Webhook client", "Webhook c1ient"),
    });
    expect(tampered.status).toBe(400);
    const unsigned = await fetch(receiver.url, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(unsigned.status).toBe(400);
    // A replay of a real delivery with only its (valid) x-platter-signature left.
    const stripped = await fetch(receiver.url, {
      method: "POST", headers: { "content-type": "application/json", "x-platter-signature": signPayload(SECRET, body) }, body,
    });
    expect(stripped.status).toBe(400);
    await receiver.printed("rejected: Missing webhook-id, webhook-timestamp or webhook-signature header");
  });

  it("answers 404 off the webhook route", async () => {
    expect((await fetch(new URL("/elsewhere", receiver.url))).status).toBe(404);
  });
});

describe("examples/message-feed.ts against the live Developer area", () => {
  let area: Server;
  let areaOrigin: string;
  beforeAll(async () => {
    const port = await freePort();
    areaOrigin = `http://127.0.0.1:${port}`;
    area = createServer(createDeveloperAreaApp(bed.db.runtime, { developerAreaUrl: areaOrigin, frameAncestors: "'self'" }, pino({ level: "silent" })).callback());
    await new Promise<void>((done) => area.listen(port, "127.0.0.1", done));
  });
  afterAll(async () => {
    area?.closeAllConnections();
    await new Promise((done) => area?.close(done));
  });

  const clientMessages = async (afterId = 0) =>
    (await bed.sql<{ envelope_id: string }>(
      "select envelope_id from webhook_messages where organization_id = ? and type = 'client.created' and id > ? order by created_at, id", [bed.org.id, afterId],
    )).map((row) => row.envelope_id);

  it("prints the client.created messages, then from the cursor it printed only the new one", async () => {
    const platter = bed.platter();
    await platter.clients.create({ name: "Feed reader" });
    const first = await runExample("examples/message-feed.ts", { PLATTER_DEVELOPER_AREA_URL: areaOrigin });
    const lines = first.trim().split("\n");
    expect(lines.slice(0, -1).map((line) => line.split("  ")[2])).toEqual(await clientMessages());
    const cursor = /^resume after: (\S+)$/.exec(lines.at(-1)!)?.[1];
    expect(cursor).toBeDefined();

    const [seen] = await bed.sql<{ id: string }>("select max(id) as id from webhook_messages where organization_id = ?", [bed.org.id]);
    await platter.clients.create({ name: "Late reader" });
    const again = await runExample("examples/message-feed.ts", { PLATTER_DEVELOPER_AREA_URL: areaOrigin, PLATTER_FEED_CURSOR: cursor! });
    const [line, last] = again.trim().split("\n");
    expect(line!.split("  ").slice(1)).toEqual(["client.created", (await clientMessages(Number(seen!.id)))[0], "Late reader"]);
    expect(last).toMatch(/^resume after: \S+$/);
  });
});
