export * from "./ops-server.ts";
export * from "./process-lifecycle.ts";
export * from "./config.ts";
export * from "./logger.ts";
export * from "./outage-watch.ts";
export * from "./address-failures.ts";
export * from "./client-address.ts";
