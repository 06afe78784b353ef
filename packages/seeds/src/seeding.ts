import type { InvalidInput, OrgScope } from "@platter/domain";
import { Database } from "@platter/persistence/tooling";
import { Effect } from "effect";
import { type BulkSeedOptions, type SeedProgress, seedBulk } from "./bulk.ts";
import { type DeliveryLogSeedOptions, seedDeliveryLog } from "./delivery-log.ts";

/**
 * Sample data in bulk for one organization (`platter seed bulk`, the benchmarks): an operator's
 * tool, always within the operator's scope of it, run on the process's database.
 */
export const Seeding = {
  /** Large generated volumes, chunk by chunk (for load tests). */
  bulk: (scope: OrgScope, options: BulkSeedOptions, onProgress?: SeedProgress): Effect.Effect<void, InvalidInput, Database> =>
    Database.use(({ orm }) =>
      Effect.tryPromise({
        try: () => seedBulk(orm, scope, options, onProgress),
        catch: (error) => error as InvalidInput,
      })),
  /** A week's delivery log on new endpoints: messages, deliveries and attempts (for load tests of the Developer area). */
  deliveryLog: (scope: OrgScope, options: DeliveryLogSeedOptions): Effect.Effect<void, InvalidInput, Database> =>
    Database.use((database) =>
      Effect.tryPromise({
        try: () => seedDeliveryLog(database.orm, database.secrets, scope, options),
        catch: (error) => error as InvalidInput,
      })),
};
