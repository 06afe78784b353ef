/**
 * The dispatcher's storage (`@platter/persistence/dispatcher`): the delivery queue, which works
 * across organizations by design and reads every endpoint's secret. For the dispatcher process and
 * its benchmarks; lint forbids it in the API and the Developer area.
 */
export * from "./webhooks/delivery-queue.ts";
export type { DeliveryListener } from "./webhooks/delivery-listener.ts";
/** The dispatchers' wake-up NOTIFY and its coalescing (for tools/bench-webhooks' notify-commits.ts). */
export { DELIVERIES_NOTIFY, deliveryWaker } from "./webhooks/delivery-listener.ts";
export { OPENED_SECRETS_CAPACITY, type OpenedSecrets, openedSecrets } from "./webhooks/opened-secrets.ts";
