import type { InvalidInput, OrgScope, DatabaseUnavailable } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { orgSql } from "../org-sql.ts";
import { type BulkSeedOptions, type SeedProgress, seedBulk } from "./bulk.ts";
import { type DeliveryLogSeedOptions, seedDeliveryLog } from "./delivery-log.ts";
import { type DemoCounts, seedDemo } from "./demo.ts";

/** Sample data for one organization: an operator action, always within the operator's scope of it. */
export class Seeding extends Context.Service<
  Seeding,
  {
    /** The small, realistic demo data set, in one transaction. */
    readonly demo: (scope: OrgScope) => Effect.Effect<DemoCounts, DatabaseUnavailable>;
    /** Large generated volumes, chunk by chunk (for load tests). */
    readonly bulk: (scope: OrgScope, options: BulkSeedOptions, onProgress?: SeedProgress) => Effect.Effect<void, InvalidInput | DatabaseUnavailable>;
    /** A week's delivery log on new endpoints: messages, deliveries and attempts (for load tests of the Developer area). */
    readonly deliveryLog: (scope: OrgScope, options: DeliveryLogSeedOptions) => Effect.Effect<void, InvalidInput | DatabaseUnavailable>;
  }
>()("platter/persistence/Seeding") {
  static readonly layer = Layer.effect(
    Seeding,
    Effect.gen(function* () {
      const database = yield* Database;
      const { orm } = database;
      return Seeding.of({
        demo: (scope: OrgScope) => orgSql(database, scope).transaction(seedDemo),
        bulk: (scope: OrgScope, options: BulkSeedOptions, onProgress?: SeedProgress) =>
          Effect.tryPromise({
            try: () => seedBulk(orm, scope, options, onProgress),
            catch: (error) => error as InvalidInput,
          }),
        deliveryLog: (scope: OrgScope, options: DeliveryLogSeedOptions) =>
          Effect.tryPromise({
            try: () => seedDeliveryLog(orm, database.secrets, scope, options),
            catch: (error) => error as InvalidInput,
          }),
      });
    }),
  );
}
