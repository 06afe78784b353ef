// The driver's (`@platter/postgres`): apps and tests reach it through persistence, the one adapter that may import it.
export {
  DatabaseUnreachable, hasMissingPartition, importEmbeddedPostgres, isDatabaseUnavailable, isDataRefusal, postgresCanReach, reachableCopyOf,
  type ReadStats, type ReplicaCondition, type ReplicaSettings, type ReplicaStats,
} from "@platter/postgres";
export { type Database, type DatabaseConnection, type DatabaseLimits, type DatabaseOptions, databasePoolStats, databaseReadStats, isSecretKeyRefusal, pingDatabase, type PoolStats,
  SecretKeysMissing } from "./database.ts";
export * from "./audit-log.ts";
export * from "./alerts/alert-recipients.ts";
export * from "./developer-area/developer-sessions.ts";
export * from "./process-instances.ts";
export * from "./request-log.ts";
export * from "./housekeeping.ts";
export * from "./history-partitions.ts";
export { inOneTransaction, onReplica, type OrgSql } from "./org-sql.ts";
// The rows the application writes through a scope's OrgSql (the demo data).
export {
  ClientEntity, DishEntity, EventEntity, IngredientEntity, InvoiceEntity, InvoiceLineItemEntity, ProposalEntity, RecipeEntity,
} from "./entities/index.ts";
export * from "./persistence.ts";
export * from "./repositories/index.ts";
export * from "./sandbox/sandboxes.ts";
export * from "./webhooks/local-listeners.ts";
