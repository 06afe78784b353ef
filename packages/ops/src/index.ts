export * from "./ops-server.ts";
export * from "./process-lifecycle.ts";
export * from "./config.ts";
export * from "./logger.ts";
export * from "./outage-watch.ts";
