import { Platter } from "@platter/sdk";

const platter = new Platter({
  apiKey: process.env.PLATTER_API_KEY!,
  baseUrl: process.env.PLATTER_BASE_URL!,
  maxRetries: 4, // retries of connection failures, timeouts, 429 and 5xx (default 2)
  timeoutMs: 10_000, // per attempt, response body included (default 30 000)
});

// Every create carries an Idempotency-Key, so the SDK's own retries never create twice.
// Pass your own key (here: an order number) to make retries across processes and restarts safe
// too: running this script again within 24 hours answers the same event id.
const orderNumber = process.env.ORDER_NUMBER ?? "4711";
const { id } = await platter.events.create(
  { name: `Lunch for order ${orderNumber}`, guests: 12 },
  { idempotencyKey: `order-${orderNumber}` },
);
console.log(`event for order ${orderNumber}: ${id}`);
