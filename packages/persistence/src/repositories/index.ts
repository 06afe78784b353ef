export * from "./api-key.repository.ts";
export * from "./client.repository.ts";
export * from "./delivery.repository.ts";
export * from "./event.repository.ts";
export * from "./invoice.repository.ts";
export * from "./organization.repository.ts";
export * from "./recipe.repository.ts";
export * from "./webhook-endpoint.repository.ts";
