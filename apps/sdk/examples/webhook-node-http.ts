import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook, WebhookSignatureError } from "@platter/sdk";

const secret = process.env.PLATTER_WEBHOOK_SECRET!; // the endpoint's signing secret

const server = createServer(async (req, res) => {
  if (req.method !== "POST" || req.url !== "/webhooks/platter") {
    res.writeHead(404).end();
    return;
  }
  // The signature covers the exact bytes received: read the raw body, do not parse it first.
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const event = await verifyWebhook(Buffer.concat(chunks), req.headers, secret);
    console.log(`received ${event.type} ${event.id}: ${String(event.data["name"])}`);
    res.writeHead(204).end(); // any 2xx acknowledges; answer fast and do slow work afterwards
  } catch (error) {
    const rejected = error instanceof WebhookSignatureError;
    console.log(rejected ? `rejected: ${error.message}` : `failed: ${String(error)}`);
    res.writeHead(rejected ? 400 : 500).end();
  }
});

server.listen(Number(process.env.PORT ?? 4000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/platter`);
});
