import { UNTHROTTLED } from "@platter/ops";
import { ATTEMPT_TEXT_MAX_CHARACTERS, CUT_MARKER, ECHOED_INPUT_MAX_CHARACTERS, LISTENER_BACKLOG_EXPIRED, LISTENER_REPLACED } from "@platter/domain";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import { ApiKeyRepository } from "@platter/persistence";
import { createOrganization, createSandbox, nothingHeld, type OrganizationFixture, testDeliveryPolicy } from "@platter/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type RunningArea, signIn, startArea } from "./developer-area-harness.ts";

/**
 * The CLI's routes over real HTTP (`platter listen`'s side of the wire): a key opens its listener's
 * server-sent-event stream, a trigger by key makes an event happen in its sandbox, the stream hands
 * over the delivery signed as the dispatcher signs it (checked with the `standardwebhooks`
 * verifier), and the reported answer is the recorded attempt. A second stream of the key replaces
 * the first; a listener gets nothing while no CLI is connected, nothing of another organization,
 * and no dispatcher ever claims its deliveries; stale backlog is given up on reconnect; the
 * organization's listeners are capped; every bad input is a 4xx JSON answer that writes nothing.
 */

let area: RunningArea;
let live: OrganizationFixture;
let sandbox: OrganizationFixture;
let other: OrganizationFixture;
let otherSandbox: OrganizationFixture;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { listenersPerOrganization: 1 });
  live = await createOrganization(area.db, "Lakeside Catering");
  sandbox = await createSandbox(area.db, live);
  other = await createOrganization(area.db, "Other Catering");
  otherSandbox = await createSandbox(area.db, other);
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const FORWARD_TO = "http://localhost:4000/hook";

interface SseEvent {
  readonly event: string;
  readonly data: Record<string, any>;
}

/** A `GET /cli/listen` stream read event by event (comments skipped). */
const openStream = async (key: string, query = `forward_to=${encodeURIComponent(FORWARD_TO)}`) => {
  const controller = new AbortController();
  const response = await fetch(`${area.origin}/cli/listen?${query}`, { headers: { ...bearer(key), accept: "text/event-stream" }, signal: controller.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const next = async (): Promise<SseEvent | undefined> => {
    for (;;) {
      const end = buffered.indexOf("\n\n");
      if (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const lines = block.split("\n").filter((line) => !line.startsWith(":"));
        if (lines.length === 0) continue;
        const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
        return { event: field("event")!, data: JSON.parse(field("data")!) };
      }
      const read = await reader.read();
      if (read.done) return undefined;
      buffered += read.value;
    }
  };
  const ready = await next();
  return { ready: ready!, next, close: () => controller.abort() };
};

const trigger = (key: string, type: string) =>
  fetch(`${area.origin}/cli/trigger`, { method: "POST", headers: { ...bearer(key), "content-type": "application/json" }, body: JSON.stringify({ type }) });

const report = (key: string, body: Record<string, unknown>) =>
  fetch(`${area.origin}/cli/listen/attempts`, { method: "POST", headers: { ...bearer(key), "content-type": "application/json" }, body: JSON.stringify(body) });

/** The listener endpoint of key `keyId`, and its deliveries with their attempts. */
const listenerOf = async (keyId: number) => {
  const [endpoint] = await rows<{ id: string; url: string; listening: boolean }>(
    "select id, url, coalesce(listening_until > now(), false) as listening from webhook_endpoints where listener_key_id = ?", [keyId],
  );
  return endpoint;
};
const deliveriesOf = (endpointId: string) =>
  rows<{ id: string; status: string; via_listener: boolean; attempts: number; codes: Array<number | null>; errors: Array<string | null> }>(
    `select d.id, d.status, d.via_listener, d.attempts,
       coalesce((select array_agg(a.status_code order by a.id) from webhook_attempts a where a.delivery_id = d.id), '{}') as codes,
       coalesce((select array_agg(a.error order by a.id) from webhook_attempts a where a.delivery_id = d.id), '{}') as errors
     from webhook_deliveries d where d.endpoint_id = ? order by d.id`,
    [endpointId],
  );

describe("platter listen's stream", () => {
  it("hands over each delivery signed as a dispatcher signs it, and records the reported answer as the attempt", async () => {
    const stream = await openStream(sandbox.writeKey);
    expect(stream.ready).toEqual({
      event: "ready",
      data: { listener_id: expect.any(Number), secret: expect.stringMatching(/^whsec_/), forward_to: FORWARD_TO, events: [], took_over: false },
    });
    const triggered = await trigger(sandbox.writeKey, "client.created");
    expect(triggered.status).toBe(201);
    expect(await triggered.json()).toEqual({ type: "client.created", subject: expect.stringMatching(/^client \d+$/) });

    const delivery = await stream.next();
    expect(delivery?.event).toBe("delivery");
    const data = delivery!.data;
    expect(data).toMatchObject({ type: "client.created", attempt: 1, message_id: expect.stringMatching(/^evt_/) });
    // The off-the-shelf verifier accepts it with the secret the stream announced.
    const verified = new Webhook(stream.ready.data["secret"]).verify(data["body"], data["headers"]) as { type: string; data: { name: string } };
    expect(verified).toMatchObject({ type: "client.created", data: { name: "Sandbox client" } });
    expect(data["headers"]["webhook-id"]).toBe(data["message_id"]);
    expect(data["headers"]["x-platter-signature"]).toMatch(/^[0-9a-f]{64}$/);

    const answered = await report(sandbox.writeKey, {
      delivery_id: data["delivery_id"], lease_token: data["lease_token"], status_code: 200, duration_ms: 12, error: null, response_body: "ok",
    });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ recorded: true, status: "succeeded" });
    const endpoint = await listenerOf(sandbox.writeKeyId);
    expect(endpoint).toEqual({ id: String(stream.ready.data["listener_id"]), url: FORWARD_TO, listening: true });
    expect(await deliveriesOf(endpoint!.id)).toEqual([{ id: String(data["delivery_id"]), status: "succeeded", via_listener: true, attempts: 1, codes: [200], errors: [null] }]);
    // The same report again: the lease is spent (409), nothing more recorded.
    const again = await report(sandbox.writeKey, {
      delivery_id: data["delivery_id"], lease_token: data["lease_token"], status_code: 200, duration_ms: 12,
    });
    expect(again.status).toBe(409);
    expect((await deliveriesOf(endpoint!.id))[0]!.codes).toEqual([200]);
    // The trigger and the listener's creation are audited as the key.
    expect(await rows("select action, api_key_id from audit_log where organization_id = ? order by id", [sandbox.id])).toEqual([
      { action: "webhook_listener.created", api_key_id: String(sandbox.writeKeyId) },
      { action: "sandbox.triggered", api_key_id: String(sandbox.writeKeyId) },
    ]);

    // A local 500 is a failed attempt, and no retry follows (a listener's deliveries are tried once).
    expect((await trigger(sandbox.writeKey, "event.created")).status).toBe(201);
    const second = (await stream.next())!.data;
    expect(second["type"]).toBe("event.created");
    const failed = await report(sandbox.writeKey, {
      delivery_id: second["delivery_id"], lease_token: second["lease_token"], status_code: 500, duration_ms: 3, response_body: "boom",
    });
    expect(failed.status).toBe(200);
    expect(await failed.json()).toEqual({ recorded: true, status: "failed" });
    expect((await deliveriesOf(endpoint!.id))[1]).toMatchObject({ status: "failed", attempts: 1, codes: [500] });
    stream.close();
  });

  it("gives a listener nothing while no CLI is connected, and no dispatcher claims a listener's deliveries", async () => {
    const endpoint = (await listenerOf(sandbox.writeKeyId))!;
    await expect.poll(async () => (await listenerOf(sandbox.writeKeyId))!.listening).toBe(false);
    const before = await deliveriesOf(endpoint.id);
    expect((await trigger(sandbox.writeKey, "client.created")).status).toBe(201);
    expect(await deliveriesOf(endpoint.id)).toEqual(before);
    // Pending listener deliveries exist (made while listening): the dispatchers' due index leaves them out.
    const stream = await openStream(sandbox.writeKey);
    expect((await trigger(sandbox.writeKey, "client.created")).status).toBe(201);
    const handed = (await stream.next())!.data;
    const [dispatchable] = await rows<{ n: number }>(
      "select count(*)::int as n from webhook_deliveries where endpoint_id = ? and status = 'pending' and not via_listener", [endpoint.id],
    );
    expect(dispatchable!.n).toBe(0);
    const claimed = await area.db.run(DeliveryQueue.use((queue) => queue.claimDue(100, 30_000, testDeliveryPolicy, nothingHeld)));
    expect(claimed.due.map((delivery) => delivery.endpointId)).not.toContain(Number(endpoint.id));
    expect((await deliveriesOf(endpoint.id)).at(-1)).toMatchObject({ id: String(handed["delivery_id"]), status: "pending", via_listener: true });
    stream.close();
  });

  it("replaces a key's stream with its newer one, which the older one is told", async () => {
    const first = await openStream(sandbox.writeKey);
    const second = await openStream(sandbox.writeKey);
    expect(second.ready.data["listener_id"]).toBe(first.ready.data["listener_id"]);
    expect(second.ready.data["took_over"]).toBe(true);
    let event = await first.next();
    while (event?.event === "delivery") event = await first.next();
    expect(event).toEqual({ event: "replaced", data: { error: LISTENER_REPLACED } });
    expect(await first.next()).toBeUndefined();
    second.close();
  });

  it("gives up deliveries that waited past the backlog when the listener connects again, each with an attempt saying why", async () => {
    // No stream of the key may still hand it out meanwhile.
    await expect.poll(async () => (await listenerOf(sandbox.writeKeyId))!.listening).toBe(false);
    const endpoint = (await listenerOf(sandbox.writeKeyId))!;
    const [pending] = await rows<{ id: string }>(
      "select id from webhook_deliveries where endpoint_id = ? and status = 'pending' order by id limit 1", [endpoint.id],
    );
    await rows("update webhook_deliveries set created_at = now() - interval '2 hours', lease_expires_at = null where id = ?", [pending!.id]);
    const stream = await openStream(sandbox.writeKey);
    const given = (await deliveriesOf(endpoint.id)).find((delivery) => delivery.id === pending!.id);
    expect(given).toMatchObject({ status: "failed", codes: [null], errors: [LISTENER_BACKLOG_EXPIRED] });
    stream.close();
  });
});

describe("what a local answer brings", () => {
  it("records an answer with NUL bytes and an error of half a million characters storable and cut, as a dispatcher records a receiver's", async () => {
    const stream = await openStream(otherSandbox.writeKey);
    expect((await trigger(otherSandbox.writeKey, "client.created")).status).toBe(201);
    const handed = (await stream.next())!.data;
    const answered = await report(otherSandbox.writeKey, {
      delivery_id: handed["delivery_id"], lease_token: handed["lease_token"], status_code: 502, duration_ms: 4,
      error: `\uD800${"e".repeat(500_000)}`, response_body: "bad\u0000bytes",
    });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ recorded: true, status: "failed" });
    expect(await rows("select error, response_body from webhook_attempts where delivery_id = ?", [handed["delivery_id"]])).toEqual([
      { error: `\uFFFD${"e".repeat(ATTEMPT_TEXT_MAX_CHARACTERS - 2)}${CUT_MARKER}`, response_body: "bad\uFFFDbytes" },
    ]);
    stream.close();
  });
});

describe("the Webhooks pages", () => {
  it("mark a key's listener, connected or offline, on the list and on its page", async () => {
    const session = await signIn(area, await area.link(sandbox.id));
    const endpoint = (await listenerOf(sandbox.writeKeyId))!;
    const page = async (path: string) => {
      const response = await fetch(area.origin + path, { headers: { cookie: session.cookie } });
      expect(response.status).toBe(200);
      return response.text();
    };
    const stream = await openStream(sandbox.writeKey);
    expect(await page("/webhooks")).toContain(`<a href="/webhooks/${endpoint.id}">${FORWARD_TO}</a> <span class="badge badge-active" title="Forwarded by platter listen with key platter_test_rw_`);
    expect(await page(`/webhooks/${endpoint.id}`)).toContain("forwards this endpoint's deliveries to this URL on its own machine");
    expect(await page(`/webhooks/${endpoint.id}`)).toContain("It is connected now.");
    stream.close();
    await expect.poll(async () => (await listenerOf(sandbox.writeKeyId))!.listening).toBe(false);
    expect(await page("/webhooks")).toContain("platter listen · offline</span>");
    expect(await page(`/webhooks/${endpoint.id}`)).toContain("It is not connected: it gets new deliveries only while it is.");
  });
});

describe("what one organization's key can do to another's", () => {
  it("never hands a listener another organization's messages, and refuses a report of another organization's delivery", async () => {
    const mine = await openStream(sandbox.writeKey);
    const theirs = await openStream(otherSandbox.writeKey);
    expect((await trigger(otherSandbox.writeKey, "client.created")).status).toBe(201);
    const handed = (await theirs.next())!.data;
    // The other organization's delivery, reported with this organization's key: as if it did not exist.
    const refused = await report(sandbox.writeKey, {
      delivery_id: handed["delivery_id"], lease_token: handed["lease_token"], status_code: 200, duration_ms: 1,
    });
    expect(refused.status).toBe(409);
    expect(await rows("select count(*)::int as n from webhook_attempts where delivery_id = ?", [handed["delivery_id"]])).toEqual([{ n: 0 }]);
    // Mine got nothing of theirs: my listener's deliveries are all of my organization.
    const mineEndpoint = (await listenerOf(sandbox.writeKeyId))!;
    expect(await rows("select count(*)::int as n from webhook_deliveries where endpoint_id = ? and organization_id <> ?", [mineEndpoint.id, sandbox.id]))
      .toEqual([{ n: 0 }]);
    mine.close();
    theirs.close();
  });

  it("caps the listeners an organization has connected (LISTENERS_PER_ORGANIZATION), writing nothing for the one refused", async () => {
    const first = await openStream(sandbox.writeKey);
    const second = await area.db.run(ApiKeyRepository.use((keys) => keys.create(sandbox.scope, "read_write")));
    const refused = await fetch(`${area.origin}/cli/listen?forward_to=${encodeURIComponent(FORWARD_TO)}`, { headers: bearer(second.key) });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({ error: "This organization already has 1 platter listen sessions connected; stop one first" });
    expect(await listenerOf(second.id)).toBeUndefined();
    // Another organization's listeners do not count.
    const elsewhere = await openStream(other.writeKey);
    expect(elsewhere.ready.event).toBe("ready");
    first.close();
    elsewhere.close();
  });
});

describe("the API's rate limits on the CLI's routes", () => {
  let limited: RunningArea;
  let org: OrganizationFixture;
  beforeAll(async () => {
    limited = await startArea(inject("pgAdminUrl"), "'self'", {
      rateLimits: { ...UNTHROTTLED, keyRequestsPerSecond: 1, keyRequestBurst: 3, authFailures: 3, authFailureWindowSeconds: 60 },
    });
    org = await createOrganization(limited.db, "Busy Kitchen");
  });
  afterAll(() => limited?.stop());
  const reportTo = (key: string) =>
    fetch(`${limited.origin}/cli/listen/attempts`, {
      method: "POST", headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ delivery_id: 1, lease_token: "00000000-0000-0000-0000-000000000000", status_code: 200, duration_ms: 1 }),
    });

  it("counts a key's requests: past its burst, a 429 with Retry-After before anything is looked at", async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await reportTo(org.writeKey)).status);
    expect(statuses).toEqual([409, 409, 409, 429]);
    const refused = await reportTo(org.writeKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await refused.json()).toEqual({ error: expect.stringMatching(/^Too many requests for this API key; retry in \d+ s$/) });
  });

  it("counts an address's failed authentications: past them, a 429 without a key lookup", async () => {
    const unknown = `platter_live_rw_${"y".repeat(43)}`;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await reportTo(unknown)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(await (await reportTo(unknown)).json()).toEqual({ error: expect.stringMatching(/^Too many failed authentications from this address; retry in \d+ s$/) });
  });
});

describe("bad requests", () => {
  const listen = (query: string, headers: Record<string, string>) => fetch(`${area.origin}/cli/listen?${query}`, { headers });
  const forward = `forward_to=${encodeURIComponent(FORWARD_TO)}`;

  it.each([
    ["no key", () => listen(forward, {}), 401, "Missing, malformed or revoked API key"],
    ["an unknown key", () => listen(forward, bearer(`platter_test_rw_${"x".repeat(43)}`)), 401, "Missing, malformed or revoked API key"],
    ["no forward_to", () => listen("", bearer(sandbox.writeKey)), 400, "forward_to is required: the local URL to forward deliveries to"],
    ["a forward_to that is not http(s)", () => listen("forward_to=ftp://x", bearer(sandbox.writeKey)), 400, "forward_to: The URL must start with https:// (or http://)"],
    ["an unknown event type", () => listen(`${forward}&events=invoice.void`, bearer(sandbox.writeKey)), 400, expect.stringMatching(/^events: unknown event type "invoice.void"/)],
    ["an unknown event type of a thousand letters and a NUL", () => listen(`${forward}&events=${"q".repeat(1000)}%00`, bearer(sandbox.writeKey)), 400, expect.stringMatching(new RegExp(`^events: unknown event type "${"q".repeat(ECHOED_INPUT_MAX_CHARACTERS - 1)}${CUT_MARKER}"; known: `))],
    ["a report with an unknown field of a thousand letters and a NUL", () => report(sandbox.writeKey, { [`${"q".repeat(1000)}\u0000`]: 1 }), 400, `unknown field: ${"q".repeat(ECHOED_INPUT_MAX_CHARACTERS - 1)}${CUT_MARKER}`],
    ["a report that is not JSON", () => fetch(`${area.origin}/cli/listen/attempts`, { method: "POST", headers: { ...bearer(sandbox.writeKey), "content-type": "application/json" }, body: "{" }), 400, "request body is not valid JSON"],
    ["a report without a lease token", () => report(sandbox.writeKey, { delivery_id: 1, status_code: 200, duration_ms: 1 }), 400, "lease_token is required"],
    ["a report with a bad status", () => report(sandbox.writeKey, { delivery_id: 1, lease_token: "00000000-0000-0000-0000-000000000000", status_code: 42, duration_ms: 1 }), 400, "status_code must be an HTTP status (100 to 599) or null"],
    ["a trigger with a read-only key", () => trigger(sandbox.readKey, "client.created"), 403, "This API key is read-only"],
    // A listener is an endpoint the key adds, fed payloads the read API does not show: read/write keys only.
    ["a listen with a read-only key", () => listen(forward, bearer(sandbox.readKey)), 403, "This API key is read-only"],
    ["a live organization's listen with a read-only key", () => listen(forward, bearer(live.readKey)), 403, "This API key is read-only"],
    ["a trigger of an unknown type", () => trigger(sandbox.writeKey, "invoice.void"), 400, expect.stringMatching(/^type must be one of /)],
    ["a trigger without a type", () => fetch(`${area.origin}/cli/trigger`, { method: "POST", headers: { ...bearer(sandbox.writeKey), "content-type": "application/json" }, body: "{}" }), 400, "type is required"],
    ["a trigger in a live organization", () => trigger(live.writeKey, "client.created"), 409, expect.stringMatching(/^This organization is not a sandbox/)],
    ["an unknown CLI path", () => fetch(`${area.origin}/cli/nothing`, { headers: bearer(sandbox.writeKey) }), 404, "Unknown endpoint"],
  ])("%s: a 4xx with a JSON error, nothing written", async (_case, send, status, error) => {
    const before = await rows("select (select count(*)::int from webhook_messages) as messages, (select count(*)::int from webhook_attempts) as attempts, (select count(*)::int from webhook_endpoints) as endpoints, (select count(*)::int from audit_log) as audit");
    const response = await send();
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ error });
    expect(await rows("select (select count(*)::int from webhook_messages) as messages, (select count(*)::int from webhook_attempts) as attempts, (select count(*)::int from webhook_endpoints) as endpoints, (select count(*)::int from audit_log) as audit")).toEqual(before);
  });
});

// Last: the area stops serving streams for good.
describe("a stopping Developer area", () => {
  it("ends its open streams and answers a new one 503 with Retry-After, so its shutdown waits on no CLI", async () => {
    const stream = await openStream(sandbox.writeKey);
    area.endStreams();
    let event = await stream.next();
    while (event !== undefined) event = await stream.next();
    const refused = await fetch(`${area.origin}/cli/listen?forward_to=${encodeURIComponent(FORWARD_TO)}`, { headers: bearer(sandbox.writeKey) });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toEqual({ error: "This server is shutting down; retry shortly" });
  });
});
