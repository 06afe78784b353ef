import {
  authenticatedScope, type InvalidTransition, NotFound, notASandbox, notSwitchedFromLive, type OrgScope, sandboxName, sandboxOfSandbox, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { orDieButOutage } from "@platter/postgres";
import { Database } from "../database.ts";
import { type OrgSql, orgSql, type OrgTable, sql } from "../org-sql.ts";

/**
 * Sandboxes: a live organization's one linked sandbox organization (`organizations.sandbox_of`),
 * with the same currency and the demo data, which it can reset. A sandbox is an organization like
 * any other (its own keys, `platter_test_…`, endpoints, deliveries, sessions), so nothing of its
 * data can mix with its live organization's: every store reaches it through its own scope. The one
 * step across, from one side's scope to the other's, is `scopeOfLinkedOrganization` below.
 */

/** Where an organization stands: live (with its sandbox, if it has one) or a sandbox (with its live organization). */
export type SandboxStanding =
  | { readonly kind: "live"; readonly name: string; readonly sandbox: { readonly id: number; readonly name: string } | null }
  | { readonly kind: "sandbox"; readonly name: string; readonly live: { readonly id: number; readonly name: string } };

/**
 * The data a sandbox ships (the application's demo data, `seedDemo`), written into its organization
 * through the transaction's scoped SQL: the store opens and resets sandboxes, the application says
 * what they hold.
 */
export type SandboxSeed<A> = (tx: OrgSql) => Effect.Effect<A, DatabaseUnavailable>;

/** What a trigger needs from the demo data: a draft invoice to send, a sent invoice to pay, an open proposal to approve. */
export type SandboxTarget = "draft_invoice" | "sent_invoice" | "open_proposal";

/** A sandbox's business data, children before the rows they point to; its keys, endpoints, messages, deliveries, sessions and audit log stay. */
const BUSINESS_TABLES: ReadonlyArray<OrgTable> = [
  "dishes", "invoice_line_items", "invoices", "proposals", "events", "ingredients", "recipes", "clients", "idempotency_keys",
];

interface StandingRow {
  name: string;
  sandbox_of: string | null;
  live_name: string | null;
  sandbox_id: string | null;
  sandbox_name: string | null;
}

/**
 * The scope of the organization linked to `scope`'s: a live organization's sandbox; or a sandbox's
 * live organization, but only for a session opened by switching from that live organization
 * (`switchLinkId`: the sign-in link its session came in by, made for a switch): a sandbox session
 * opened with a link of its own (an operator's, for a contractor testing the sandbox) never reaches
 * the live organization. `NotFound` when a live organization has no sandbox yet. The only scope
 * made here (this file is one of eslint.config.js's scope makers): the same access as `scope`, no key.
 */
const scopeOfLinkedOrganization = (
  database: Database["Service"], scope: OrgScope, switchLinkId?: number,
): Effect.Effect<OrgScope, NotFound | InvalidTransition | DatabaseUnavailable> =>
  Effect.gen(function* () {
    const [row] = yield* database.rows<{ id: string; currency: string; to_live: boolean; switched: boolean }>(
      `select l.id, l.currency, l.id = o.sandbox_of as to_live,
         exists (select 1 from developer_sign_in_links k where k.id = ? and k.organization_id = o.id and k.requested_by = 'switch') as switched
       from organizations o join organizations l on l.id = o.sandbox_of or l.sandbox_of = o.id where o.id = ?`,
      [switchLinkId ?? null, scope.organizationId],
    );
    if (row === undefined) return yield* new NotFound();
    if (row.to_live && !row.switched) return yield* notSwitchedFromLive();
    return authenticatedScope({ organizationId: Number(row.id), access: scope.access, currency: row.currency, apiKeyId: 0 });
  });

/** Locks the scope's organization row for the rest of the transaction and says whether it is a sandbox. */
const lockOrganization = (tx: OrgSql) =>
  Effect.map(
    orDieButOutage(tx.one<{ sandbox: boolean }>({ columns: "o.sandbox_of is not null as sandbox", from: "organizations", as: "o", rest: sql`for update` })),
    (row) => row.sandbox,
  );

/** A live organization's sandbox, its demo data, and the one step between their scopes. */
export class Sandboxes extends Context.Service<
  Sandboxes,
  {
    /** Whether the scope's organization is live or a sandbox, and the organization linked to it. */
    readonly standing: (scope: OrgScope) => Effect.Effect<SandboxStanding, DatabaseUnavailable>;
    /**
     * The live organization's sandbox, created with its currency, "<name> (sandbox)" and `seed`'s
     * data (the demo data) when it has none (`created`); opening it again changes nothing. A sandbox's own is
     * `InvalidTransition`. Should seeding ever have failed after the row was made, opening seeds it.
     */
    readonly open: (liveScope: OrgScope, seed: SandboxSeed<unknown>) => Effect.Effect<{ readonly id: number; readonly created: boolean }, InvalidTransition | DatabaseUnavailable>;
    /**
     * The scope of the linked organization (see `scopeOfLinkedOrganization`): a live organization's
     * sandbox (`NotFound` without one); a sandbox's live organization only with `switchLinkId`, the
     * link of a session opened by a switch from it (`InvalidTransition` otherwise).
     */
    readonly linkedScope: (scope: OrgScope, switchLinkId?: number) => Effect.Effect<OrgScope, NotFound | InvalidTransition | DatabaseUnavailable>;
    /**
     * Deletes a sandbox's business data (events, dishes, proposals, invoices, clients, recipes,
     * ingredients, idempotency keys) and writes `seed`'s (the demo data) again, in one transaction; its keys,
     * endpoints and delivery history stay. A live organization is `InvalidTransition`, untouched.
     */
    readonly reset: <A>(sandboxScope: OrgScope, seed: SandboxSeed<A>) => Effect.Effect<A, InvalidTransition | DatabaseUnavailable>;
    /** The oldest record a trigger can act on (see `SandboxTarget`), or `undefined` when none is left. */
    readonly target: (scope: OrgScope, target: SandboxTarget) => Effect.Effect<number | undefined, DatabaseUnavailable>;
  }
>()("platter/persistence/Sandboxes") {
  static readonly layer = Layer.effect(
    Sandboxes,
    Effect.gen(function* () {
      const database = yield* Database;
      const standing = Effect.fnUntraced(function* (scope: OrgScope) {
        // Organization rows only, by the scope's own id: the other side's name and id, nothing of its data.
        const [row] = yield* database.rows<StandingRow>(
          `select o.name, o.sandbox_of, l.name as live_name, s.id as sandbox_id, s.name as sandbox_name
           from organizations o
           left join organizations l on l.id = o.sandbox_of
           left join organizations s on s.sandbox_of = o.id
           where o.id = ?`,
          [scope.organizationId],
        );
        if (row === undefined) return yield* Effect.die(new Error(`organization ${scope.organizationId} of a scope does not exist`));
        return row.sandbox_of === null
          ? { kind: "live", name: row.name, sandbox: row.sandbox_id === null ? null : { id: Number(row.sandbox_id), name: row.sandbox_name! } } as const
          : { kind: "sandbox", name: row.name, live: { id: Number(row.sandbox_of), name: row.live_name! } } as const;
      });
      return Sandboxes.of({
        standing,
        open: Effect.fnUntraced(function* (liveScope: OrgScope, seed: SandboxSeed<unknown>) {
          const live = yield* standing(liveScope);
          if (live.kind === "sandbox") return yield* sandboxOfSandbox();
          // One sandbox per live organization: the unique `sandbox_of` settles two opens at once.
          const [inserted] = yield* database.rows<{ id: string }>(
            `insert into organizations (name, currency, sandbox_of) values (?, ?, ?) on conflict (sandbox_of) do nothing returning id`,
            [sandboxName(live.name), liveScope.currency, liveScope.organizationId],
          );
          const sandboxScope = yield* orDieButOutage(scopeOfLinkedOrganization(database, liveScope));
          yield* orgSql(database, sandboxScope).transaction((tx) =>
            Effect.gen(function* () {
              yield* lockOrganization(tx);
              const [seeded] = yield* tx.select({ columns: "1", from: "recipes", as: "r", rest: sql`limit 1` });
              if (seeded === undefined) yield* seed(tx);
            }),
          );
          return { id: sandboxScope.organizationId, created: inserted !== undefined };
        }),
        linkedScope: (scope: OrgScope, switchLinkId?: number) =>
          scopeOfLinkedOrganization(database, scope, switchLinkId),
        reset: <A>(sandboxScope: OrgScope, seed: SandboxSeed<A>) =>
          orgSql(database, sandboxScope).transaction((tx) =>
            Effect.gen(function* () {
              if (!(yield* lockOrganization(tx))) return yield* notASandbox();
              for (const table of BUSINESS_TABLES) yield* tx.delete(table, "t", sql`true`);
              return yield* seed(tx);
            }),
          ),
        target: Effect.fnUntraced(function* (scope: OrgScope, target: SandboxTarget) {
          const org = orgSql(database, scope);
          const [row] = target === "open_proposal"
            ? yield* org.select<{ id: string }>({ columns: "p.id", from: "proposals", as: "p", where: sql`p.status in ('draft', 'sent')`, rest: sql`order by p.id limit 1` })
            : yield* org.select<{ id: string }>({
              columns: "i.id", from: "invoices", as: "i", where: sql`i.status = ${target === "draft_invoice" ? "draft" : "sent"}`, rest: sql`order by i.id limit 1`,
            });
          return row === undefined ? undefined : Number(row.id);
        }),
      });
    }),
  );
}
