import { generateSigningSecret } from "@platter/domain";
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { WebhookEndpointRepository } from "@platter/persistence";
import { freePort } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook, WebhookSignatureError } from "../src/index.ts";
import { type SdkTestbed, startSdkTestbed } from "./sdk-testbed.ts";

/** verifyWebhook on what the real dispatcher process sends, end to end from an SDK create. */

const DISPATCHER = fileURLToPath(new URL("../../dispatcher/src/main.ts", import.meta.url));

interface Delivery {
  readonly rawBody: Buffer;
  readonly signature: string;
}

let bed: SdkTestbed;
let receiver: Server;
let dispatcher: ChildProcess;
const deliveries: Delivery[] = [];
let secret: string;

beforeAll(async () => {
  bed = await startSdkTestbed();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      deliveries.push({ rawBody: Buffer.concat(chunks), signature: String(req.headers["x-platter-signature"]) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  ({ secret } = await bed.db.run(WebhookEndpointRepository.use((e) => e.add(bed.org.scope, url, ["client.created"], generateSigningSecret()))));
  dispatcher = spawn(process.execPath, ["--conditions=@platter/source", DISPATCHER], {
    env: {
      ...process.env,
      DATABASE_URL: bed.db.url,
      DISPATCHER_OPS_PORT: String(await freePort()),
      HOST: "127.0.0.1",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      DISPATCHER_POLL_INTERVAL: "200ms",
      LOG_LEVEL: "warn",
    },
    stdio: "ignore",
  });
});

afterAll(async () => {
  dispatcher?.kill("SIGTERM");
  receiver?.close();
  await bed?.close();
});

const waitForDelivery = async (): Promise<Delivery> => {
  const deadline = Date.now() + 30_000;
  while (deliveries.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(deliveries.length).toBeGreaterThan(0);
  return deliveries[0]!;
};

describe("verifyWebhook on deliveries of the real dispatcher", () => {
  it("returns the typed envelope of the client the SDK created", async () => {
    const created = await bed.platter().clients.create({ name: "Webhook Ada", email: "ada@example.com" });
    const delivery = await waitForDelivery();
    const envelope = await verifyWebhook(delivery.rawBody, delivery.signature, secret);
    expect(envelope.type).toBe("client.created");
    expect(envelope.id).toMatch(/^evt_/);
    expect(envelope.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(envelope.data).toMatchObject({ id: created.id, name: "Webhook Ada", email: "ada@example.com" });
    // The raw body as a string verifies the same.
    expect((await verifyWebhook(delivery.rawBody.toString("utf8"), delivery.signature, secret)).id).toBe(envelope.id);
  });

  it("rejects the delivery when one byte of the body is changed, or with another secret", async () => {
    const delivery = await waitForDelivery();
    const tampered = Buffer.from(delivery.rawBody);
    tampered.writeUInt8(tampered.readUInt8(tampered.length - 2) ^ 1, tampered.length - 2);
    await expect(verifyWebhook(tampered, delivery.signature, secret)).rejects.toBeInstanceOf(WebhookSignatureError);
    await expect(verifyWebhook(delivery.rawBody, delivery.signature, "whsec_other")).rejects.toBeInstanceOf(
      WebhookSignatureError,
    );
  });
});
