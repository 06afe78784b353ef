import {
  type Client, type ClientCreate, clientListing, type ListPage, type NotFound, type OrgScope, type PageRequest, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { ClientEntity } from "../entities/index.ts";
import { isoTimestamp, readKeysetPage } from "../keyset-page.ts";
import { type OrgSql, orgSql, sql } from "../org-sql.ts";

/**
 * Clients: keyset list by name and id, and the row of a new one (the API's create with its
 * `client.created` message is the application's `Clients.create`).
 */

/** A client's columns (`COLUMNS`), in their order. */
type ClientRow = readonly [id: string, name: string, email: string | null, phone: string | null, company: string | null, created_at: string];

const COLUMNS = `c.id, c.name, c.email, c.phone, c.company, ${isoTimestamp("c.created_at")} as created_at`;

/** Maps a stored client (its column values, by position) to its API shape. */
const toClient = (row: ClientRow): Client => ({
  id: Number(row[0]),
  name: row[1],
  email: row[2],
  phone: row[3],
  company: row[4],
  created_at: row[5],
});

/** Reads one client of the scope as the API shows it (inside a create's transaction). */
export const readClient = (org: OrgSql, id: number): Effect.Effect<Client, NotFound | DatabaseUnavailable> =>
  Effect.map(org.oneValues<ClientRow>({ columns: COLUMNS, from: "clients", as: "c", where: sql`c.id = ${id}` }), toClient);

export class ClientRepository extends Context.Service<
  ClientRepository,
  {
    readonly list: (scope: OrgScope, page: PageRequest<readonly [string, number]>) => Effect.Effect<ListPage<Client>, DatabaseUnavailable>;
    /** Inserts a new client and returns its id; in the caller's transaction when there is one (`inOneTransaction`). */
    readonly insert: (scope: OrgScope, input: ClientCreate) => Effect.Effect<number, DatabaseUnavailable>;
    /** One client as the API shows it (a create reads it for its message). */
    readonly read: (scope: OrgScope, id: number) => Effect.Effect<Client, NotFound | DatabaseUnavailable>;
  }
>()("platter/persistence/ClientRepository") {
  static readonly layer = Layer.effect(
    ClientRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      return ClientRepository.of({
        list: (scope: OrgScope, page: PageRequest<readonly [string, number]>) =>
          readKeysetPage(
            orgSql(database, scope),
            clientListing,
            { columns: COLUMNS, from: "clients", as: "c", keyColumns: ["c.name", "c.id"], keyCasts: ["text", "bigint"] },
            page,
            toClient,
            "values",
          ),
        insert: (scope: OrgScope, input: ClientCreate) =>
          orgSql(database, scope).insert(ClientEntity, {
            name: input.name,
            email: input.email ?? null,
            phone: input.phone ?? null,
            company: input.company ?? null,
          }),
        read: (scope: OrgScope, id: number) => readClient(orgSql(database, scope), id),
      });
    }),
  );
}
