/**
 * What the test harness (`@platter/testing`) and the bulk seeds (`@platter/seeds`) need of the
 * database's internals (`@platter/persistence/tooling`): the `Database` service (its ORM, for a
 * test's own checks and for set-based seeding), resealing secrets written in clear, waiting for a
 * server, and the embedded PostgreSQL binaries. Lint lets only those two packages import it.
 */
export { Database, resealStoredSecrets } from "./database.ts";
export { waitForDatabase } from "./database-availability.ts";
export { importEmbeddedPostgres } from "./embedded-postgres.ts";
export type { SealedCounts } from "./stored-secrets.ts";
