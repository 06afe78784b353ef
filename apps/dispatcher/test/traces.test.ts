import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { generateSigningSecret } from "@platter/domain";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import {
  freePort, killLeftoverDispatchers, type Receiver, settledDeliveries, sql, startDispatcherProcess, startReceiver, waitFor,
} from "./dispatcher-harness.ts";

/**
 * OpenTelemetry traces end to end: the API and a dispatcher as operators run them (processes of
 * their own), exporting OTLP/HTTP JSON to a receiver this test runs, which decodes what arrives.
 */

const API_MAIN = fileURLToPath(new URL("../../api/src/main.ts", import.meta.url));

let db: TestDatabase;
const receivers: Receiver[] = [];
const apis: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterEach(async () => {
  await killLeftoverDispatchers();
  for (const api of apis.splice(0)) api.kill("SIGKILL");
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => db?.dispose());

/** The variables an operator sets to export to `collector`: JSON, sent every 100 ms. */
const otlpEnv = (collector: Receiver): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  OTEL_BSP_SCHEDULE_DELAY: "100",
});

/** Every tracing variable unset, whatever the test runner's environment holds. */
const NO_OTEL: Record<string, undefined> = {
  OTEL_EXPORTER_OTLP_ENDPOINT: undefined, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined, OTEL_SDK_DISABLED: undefined,
  OTEL_TRACES_EXPORTER: undefined, OTEL_SERVICE_NAME: undefined, OTEL_RESOURCE_ATTRIBUTES: undefined,
};

/** Spawns the API process on free ports; resolves once it is healthy. */
const startApiProcess = async (env: Record<string, string | undefined>) => {
  const [port, opsPort] = [await freePort(), await freePort()];
  const merged: Record<string, string | undefined> = {
    ...process.env, ...NO_OTEL, LOG_LEVEL: "warn", HOST: "127.0.0.1", DATABASE_URL: db.url, PORT: String(port), OPS_PORT: String(opsPort), ...env,
  };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const child = spawn(process.execPath, ["--conditions=@platter/source", API_MAIN], { env: merged, stdio: ["ignore", "pipe", "pipe"] });
  apis.push(child);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  await waitFor("the API to become healthy", () => fetch(`http://127.0.0.1:${opsPort}/readyz`).then((r) => r.status === 200, () => false), 30_000);
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    stop: () => (child.kill("SIGTERM"), exited),
  };
};

/** A span as the receiver decoded it from OTLP JSON, its attributes as plain values, with its resource's service name. */
interface ReceivedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

const plain = (value: OtlpValue): unknown =>
  value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue;

const attributesOf = (list: OtlpAttribute[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((attribute) => [attribute.key, plain(attribute.value)]));

/** Every span the collector received, decoded (each request an `ExportTraceServiceRequest` in JSON). */
const spansOf = (collector: Receiver): ReceivedSpan[] =>
  collector.received.flatMap((request) => {
    expect(request.headers["content-type"]).toContain("application/json");
    const body = JSON.parse(request.rawBody.toString("utf8")) as {
      resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: (Omit<ReceivedSpan, "attributes" | "service"> & { attributes: OtlpAttribute[] })[] }[] }[];
    };
    return body.resourceSpans.flatMap((resource) => {
      const service = String(attributesOf(resource.resource.attributes)["service.name"]);
      return resource.scopeSpans.flatMap((scope) =>
        scope.spans.map((span) => ({
          service, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId || undefined, name: span.name, kind: span.kind,
          attributes: attributesOf(span.attributes),
        })));
    });
  });

/** OTLP's span kinds. */
const SERVER = 2;
const CLIENT = 3;

/** An organization whose one endpoint is `target`. */
const organizationWithEndpoint = async (target: Receiver): Promise<OrganizationFixture> => {
  const org = await createOrganization(db, "Traced Caterers");
  await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, target.url, [], generateSigningSecret())));
  return org;
};

/** `POST /v1/events` with the organization's write key (and `headers`); expects 201. */
const createEvent = async (api: { url: string }, org: OrganizationFixture, headers: Record<string, string> = {}) => {
  const response = await fetch(`${api.url}/v1/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${org.writeKey}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ name: "Traced dinner" }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string };
};

describe("with OTEL_EXPORTER_OTLP_ENDPOINT set", () => {
  it("a create and its delivery are one trace: the request's span, its statements' spans and the attempt's span", async () => {
    const collector = await startReceiver(() => ({ status: 200 }));
    const target = await startReceiver(() => ({ status: 200 }));
    receivers.push(collector, target);
    const org = await organizationWithEndpoint(target);
    const api = await startApiProcess(otlpEnv(collector));
    await startDispatcherProcess(db.url, { ...NO_OTEL, ...otlpEnv(collector) });

    await createEvent(api, org);
    await settledDeliveries(db, org.id, 1);
    const attempt = await waitFor("the attempt's span", () => spansOf(collector).find((span) => span.name === "webhook attempt"));
    const request = spansOf(collector).find((span) => span.kind === SERVER && span.attributes["http.route"] === "/v1/events");

    // The request: route, status, organization, from the API's service.
    expect(request).toMatchObject({
      service: "platter-api", name: "POST /v1/events",
      attributes: { "http.request.method": "POST", "http.route": "/v1/events", "http.response.status_code": 201, "platter.organization.id": org.id },
    });
    // Its statements, in its trace, below it: the operation and never a bound value.
    const statements = spansOf(collector).filter((span) => span.traceId === request!.traceId && span.attributes["db.system.name"] === "postgresql");
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.map((span) => span.kind)).toEqual(statements.map(() => CLIENT));
    expect(statements.map((span) => span.attributes["db.operation.name"])).toContain("INSERT");
    expect(statements.find((span) => span.attributes["db.collection.name"] === "webhook_messages")).toBeDefined();
    for (const span of statements) expect(Object.keys(span.attributes).sort()).toEqual(expect.arrayContaining(["db.operation.name", "db.system.name"]));
    expect(JSON.stringify(statements)).not.toContain("Traced dinner");
    // The attempt: a child of the request, from the dispatcher, with what it did.
    const [delivery] = await sql<{ id: string; endpoint_id: string }>(db, "select id, endpoint_id from webhook_deliveries where organization_id = ?", [org.id]);
    expect(attempt).toMatchObject({
      service: "platter-dispatcher", traceId: request!.traceId, parentSpanId: request!.spanId, kind: CLIENT,
      attributes: {
        "platter.endpoint.id": Number(delivery!.endpoint_id), "platter.delivery.id": Number(delivery!.id), "platter.attempt.number": 1,
        "http.response.status_code": 200, "platter.attempt.outcome": "succeeded", "platter.organization.id": org.id,
      },
    });
    expect(typeof attempt.attributes["platter.attempt.duration_ms"]).toBe("number");
    // The message keeps the request's context; the receiver gets no trace header (Standard Webhooks headers only).
    const [message] = await sql<{ traceparent: string }>(db, "select traceparent from webhook_messages where organization_id = ?", [org.id]);
    expect(message!.traceparent).toBe(`00-${request!.traceId}-${request!.spanId}-01`);
    expect(target.received[0]!.headers["traceparent"]).toBeUndefined();
    // A claim's span says how many it leased, with the claim's statement below it.
    const claim = await waitFor("a claim's span that leased the delivery", () =>
      spansOf(collector).find((span) => span.name === "webhook claim" && span.attributes["platter.claim.leased"] === 1));
    expect(claim.service).toBe("platter-dispatcher");
    expect(spansOf(collector).some((span) => span.parentSpanId === claim.spanId && span.attributes["db.system.name"] === "postgresql")).toBe(true);
    expect(await api.stop()).toBe(0);
  });

  it("a request's traceparent header is joined: the request, its statements and the delivery are in the caller's trace", async () => {
    const collector = await startReceiver(() => ({ status: 200 }));
    const target = await startReceiver(() => ({ status: 200 }));
    receivers.push(collector, target);
    const org = await organizationWithEndpoint(target);
    const api = await startApiProcess(otlpEnv(collector));
    await startDispatcherProcess(db.url, { ...NO_OTEL, ...otlpEnv(collector) });
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";

    await createEvent(api, org, { traceparent: `00-${traceId}-${callerSpan}-01` });
    await settledDeliveries(db, org.id, 1);
    const attempt = await waitFor("the attempt's span", () => spansOf(collector).find((span) => span.name === "webhook attempt"));
    const request = spansOf(collector).find((span) => span.kind === SERVER && span.attributes["http.route"] === "/v1/events");
    expect(request).toMatchObject({ traceId, parentSpanId: callerSpan });
    expect(spansOf(collector).filter((span) => span.attributes["db.system.name"] === "postgresql" && span.traceId === traceId).length).toBeGreaterThan(0);
    expect(attempt).toMatchObject({ traceId, parentSpanId: request!.spanId });
    expect(await api.stop()).toBe(0);
  });

  it("a caller's trace that is not sampled stays unrecorded, its deliveries too (the default sampler follows the parent)", async () => {
    const collector = await startReceiver(() => ({ status: 200 }));
    const target = await startReceiver(() => ({ status: 200 }));
    receivers.push(collector, target);
    const org = await organizationWithEndpoint(target);
    const api = await startApiProcess(otlpEnv(collector));
    const dispatcher = await startDispatcherProcess(db.url, { ...NO_OTEL, ...otlpEnv(collector) });
    const unsampled = "11111111111111111111111111111111";
    const sampled = "22222222222222222222222222222222";

    await createEvent(api, org, { traceparent: `00-${unsampled}-00f067aa0ba902b7-00` });
    await createEvent(api, org, { traceparent: `00-${sampled}-00f067aa0ba902b7-01` });
    await settledDeliveries(db, org.id, 2);
    await waitFor("the sampled trace's attempt", () => spansOf(collector).find((span) => span.traceId === sampled && span.name === "webhook attempt"));
    // Stopped, each process has sent whatever it had.
    expect(await api.stop()).toBe(0);
    expect((await dispatcher.terminate()).code).toBe(0);
    expect(spansOf(collector).filter((span) => span.traceId === unsampled)).toEqual([]);
    expect(await sql(db, "select traceparent from webhook_messages where organization_id = ? order by id", [org.id])).toEqual([
      { traceparent: expect.stringMatching(new RegExp(`^00-${unsampled}-[0-9a-f]{16}-00$`)) },
      { traceparent: expect.stringMatching(new RegExp(`^00-${sampled}-[0-9a-f]{16}-01$`)) },
    ]);
  });

  it.each([
    ["never answers", true],
    ["is down (nothing listens on its port)", false],
  ])("a receiver that %s slows and fails no request: exports stay few and bounded, and the processes still stop", async (_, listening) => {
    // Accepts every export and never answers it; or a port nothing listens on.
    const hanging = await startReceiver(() => ({ status: 200, delayMs: 600_000 }));
    const target = await startReceiver(() => ({ status: 200 }));
    receivers.push(hanging, target);
    const endpoint = listening ? `http://127.0.0.1:${hanging.port}` : `http://127.0.0.1:${await freePort()}`;
    const org = await organizationWithEndpoint(target);
    // Small batches, so many exports are due while the first hang.
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2", OTEL_EXPORTER_OTLP_TIMEOUT: "2000",
    };
    const api = await startApiProcess(env);
    const dispatcher = await startDispatcherProcess(db.url, { ...NO_OTEL, ...env });

    for (let i = 0; i < 40; i++) await createEvent(api, org);
    const deliveries = await settledDeliveries(db, org.id, 40);
    expect(deliveries.filter((delivery) => delivery.status !== "succeeded")).toEqual([]);
    // At most four exports out at once per process (two processes), however many batches filled.
    expect(hanging.peakInFlight()).toBeLessThanOrEqual(8);
    expect(hanging.received.length > 0).toBe(listening);
    expect(await api.stop()).toBe(0);
    expect((await dispatcher.terminate()).code).toBe(0);
  });

  it("sends OTLP protobuf unless told otherwise", async () => {
    const collector = await startReceiver(() => ({ status: 200 }));
    receivers.push(collector);
    const org = await createOrganization(db, "Protobuf Caterers");
    const api = await startApiProcess({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}/otlp`, OTEL_BSP_SCHEDULE_DELAY: "100" });
    await createEvent(api, org);
    // The request span's route is in the bytes of an export (a protobuf string field).
    await waitFor("the request's span", () => collector.received.some((request) => request.rawBody.includes(Buffer.from("/v1/events"))));
    expect(collector.received.map((request) => request.headers["content-type"])).toEqual(collector.received.map(() => "application/x-protobuf"));
    expect(await api.stop()).toBe(0);
  });
});

describe("with no OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("nothing is sent, no message keeps a trace context, and delivery is as before", async () => {
    const collector = await startReceiver(() => ({ status: 200 }));
    const target = await startReceiver(() => ({ status: 200 }));
    receivers.push(collector, target);
    const org = await organizationWithEndpoint(target);
    const api = await startApiProcess({ OTEL_BSP_SCHEDULE_DELAY: "100" });
    const dispatcher = await startDispatcherProcess(db.url, { ...NO_OTEL, OTEL_BSP_SCHEDULE_DELAY: "100" });

    await createEvent(api, org, { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" });
    const [delivery] = await settledDeliveries(db, org.id, 1);
    expect(delivery!.status).toBe("succeeded");
    expect(target.received).toHaveLength(1);
    expect(target.received[0]!.headers["traceparent"]).toBeUndefined();
    expect(await sql(db, "select traceparent from webhook_messages where organization_id = ?", [org.id])).toEqual([{ traceparent: null }]);
    // The processes stop (a tracer would flush then): still nothing arrived.
    expect(await api.stop()).toBe(0);
    expect((await dispatcher.terminate()).code).toBe(0);
    expect(collector.received).toHaveLength(0);
  });
});
