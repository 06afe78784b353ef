import "./provided-context.ts";
export * from "./fixtures.ts";
export * from "./test-database.ts";
export * from "./test-postgres.ts";
export * from "./controlled-postgres.ts";
export * from "./pgbouncer.ts";
export * from "./streaming-replica.ts";
export * from "./error-samples.ts";
export * from "./races.ts";
