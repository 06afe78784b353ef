import { InvalidInput, isCurrencyCode, NotFound, operatorScope, type OrgScope, type DatabaseUnavailable } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { driverCall } from "@platter/postgres";
import { Database } from "../database.ts";
import { OrganizationEntity } from "../entities/index.ts";
import type { OrgTable } from "../org-sql.ts";

/**
 * Operator actions: what someone running Platter (the CLI, internal teams) does across
 * organizations. Creating an organization, and the explicit step that makes an operator's scope of
 * one organization; everything else is then done through the same scoped repositories as the API.
 */

/** Records an operator may name by id alone; their organization is looked up to make the scope. */
export type OwnedRecord = Extract<OrgTable, "api_keys" | "webhook_endpoints" | "webhook_deliveries" | "invoices" | "proposals">;

export class Operator extends Context.Service<
  Operator,
  {
    /** Creates an organization; `currency` must be an ISO 4217 code. */
    readonly createOrganization: (fields: { name: string; currency: string }) => Effect.Effect<{ readonly id: number }, InvalidInput | DatabaseUnavailable>;
    /** The first organizations by id, to say which exist. */
    readonly organizations: (limit: number) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly name: string }>, DatabaseUnavailable>;
    /** An operator's full-access scope of organization `id`, or `NotFound`. */
    readonly scopeOf: (organizationId: number) => Effect.Effect<OrgScope, NotFound | DatabaseUnavailable>;
    /** The operator's scope of the organization that owns record `id` of `table`, or `NotFound`. */
    readonly scopeOfRecord: (table: OwnedRecord, id: number) => Effect.Effect<OrgScope, NotFound | DatabaseUnavailable>;
  }
>()("platter/persistence/Operator") {
  static readonly layer = Layer.effect(
    Operator,
    Effect.gen(function* () {
      const database = yield* Database;
      const scopeWhere = Effect.fnUntraced(function* (statement: string, id: number) {
        const [row] = yield* database.rows<{ id: string; currency: string }>(statement, [id]);
        if (row === undefined) return yield* new NotFound();
        return operatorScope(Number(row.id), row.currency);
      });
      return Operator.of({
        createOrganization: Effect.fnUntraced(function* (fields: { name: string; currency: string }) {
          const name = fields.name.trim();
          if (name === "") return yield* new InvalidInput({ message: "name must not be empty" });
          if (!isCurrencyCode(fields.currency)) {
            return yield* new InvalidInput({ message: `currency must be an ISO 4217 code such as EUR, got "${fields.currency}"` });
          }
          const id = yield* driverCall(() => database.orm.em.fork().insert(OrganizationEntity, { name, currency: fields.currency }));
          return { id: Number(id) };
        }),
        organizations: Effect.fnUntraced(function* (limit: number) {
          const rows = yield* database.rows<{ id: string; name: string }>("select id, name from organizations order by id limit ?", [limit]);
          return rows.map((row) => ({ id: Number(row.id), name: row.name }));
        }),
        scopeOf: (organizationId: number) =>
          scopeWhere("select id, currency from organizations where id = ?", organizationId),
        scopeOfRecord: (table: OwnedRecord, id: number) =>
          scopeWhere(`select o.id, o.currency from ${table} r join organizations o on o.id = r.organization_id where r.id = ?`, id),
      });
    }),
  );
}
