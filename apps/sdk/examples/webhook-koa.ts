import type { AddressInfo } from "node:net";
import Koa from "koa";
import { verifyWebhook, WebhookSignatureError } from "@platter/sdk";

const secret = process.env.PLATTER_WEBHOOK_SECRET!;
const app = new Koa();

// Mount this before any body parser: it needs the raw body. (With koa-bodyparser in front,
// pass `ctx.request.rawBody` instead of reading the stream.)
app.use(async (ctx, next) => {
  if (ctx.method !== "POST" || ctx.path !== "/webhooks/platter") return next();
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  try {
    const event = await verifyWebhook(Buffer.concat(chunks), ctx.headers, secret);
    console.log(`received ${event.type} ${event.id}: ${String(event.data["name"])}`);
    ctx.status = 204;
  } catch (error) {
    if (!(error instanceof WebhookSignatureError)) throw error;
    console.log(`rejected: ${error.message}`);
    ctx.status = 400;
    ctx.body = { error: error.message };
  }
});

const server = app.listen(Number(process.env.PORT ?? 4000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/platter`);
});
