export { DatabaseUnreachable, isDatabaseUnavailable } from "./database-availability.ts";
export { type Database, type DatabaseConnection, type DatabaseLimits, type DatabaseOptions, databasePoolStats, pingDatabase, type PoolStats } from "./database.ts";
export * from "./audit-log.ts";
export * from "./developer-area/developer-sessions.ts";
export * from "./process-instances.ts";
export * from "./housekeeping.ts";
export { inOneTransaction } from "./org-sql.ts";
export * from "./persistence.ts";
export * from "./repositories/index.ts";
