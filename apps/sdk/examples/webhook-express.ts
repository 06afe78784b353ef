import type { AddressInfo } from "node:net";
import express from "express";
import { verifyWebhook, WebhookSignatureError } from "@platter/sdk";

const secret = process.env.PLATTER_WEBHOOK_SECRET!;
const app = express();

// express.raw() keeps the body as a Buffer for this route. Register it before app.use(express.json()),
// or express.json() parses the body first and verifyWebhook refuses the parsed object.
app.post("/webhooks/platter", express.raw({ type: "application/json" }), async (req, res, next) => {
  try {
    const event = await verifyWebhook(req.body, req.headers, secret);
    console.log(`received ${event.type} ${event.id}: ${String(event.data["name"])}`);
    res.sendStatus(204);
  } catch (error) {
    if (!(error instanceof WebhookSignatureError)) return next(error);
    console.log(`rejected: ${error.message}`);
    res.status(400).json({ error: error.message });
  }
});

app.use(express.json()); // the rest of your app

const server = app.listen(Number(process.env.PORT ?? 4000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/platter`);
});
