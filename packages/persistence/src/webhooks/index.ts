export * from "./webhook-deliveries.ts";
export * from "./webhook-endpoints.ts";
export * from "./webhook-store.ts";
export * from "./outbox-listener.ts";
