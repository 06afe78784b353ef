export * from "./database-availability.ts";
export * from "./embedded-postgres.ts";
export * from "./local-postgres.ts";
export * from "./pool-options.ts";
export * from "./read-replicas.ts";
export * from "./silence-watchdog.ts";
