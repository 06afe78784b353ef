import { type DatabaseUnavailable, type NotFound, type Organization, type OrgScope } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { orgSql } from "../org-sql.ts";

/** The caller's own organization (`GET /me`). */

interface OrganizationRow {
  id: string;
  name: string;
  currency: string;
  created_at: string;
}

export class OrganizationRepository extends Context.Service<
  OrganizationRepository,
  { readonly current: (scope: OrgScope) => Effect.Effect<Organization, NotFound | DatabaseUnavailable> }
>()("platter/persistence/OrganizationRepository") {
  static readonly layer = Layer.effect(
    OrganizationRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      return OrganizationRepository.of({
        current: Effect.fnUntraced(function* (scope: OrgScope) {
          const row = yield* orgSql(database, scope).one<OrganizationRow>({
            columns: `o.id, o.name, o.currency, ${isoTimestamp("o.created_at")} as created_at`,
            from: "organizations",
            as: "o",
          });
          return { id: Number(row.id), name: row.name, currency: row.currency, created_at: row.created_at };
        }),
      });
    }),
  );
}
