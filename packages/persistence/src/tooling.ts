/**
 * What the test harness (`@platter/testing`) and the bulk seeds (`@platter/seeds`) need of the
 * database's internals (`@platter/persistence/tooling`): the `Database` service (its ORM, for a
 * test's own checks and for set-based seeding) and resealing secrets written in clear. Lint lets
 * only those two packages import it; the server itself (starting, waiting for it) is `@platter/postgres`'s.
 */
export { Database, resealStoredSecrets } from "./database.ts";
export type { SealedCounts } from "./stored-secrets.ts";
