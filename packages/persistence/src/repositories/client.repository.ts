import {
  type Client, type ClientCreate, clientListing, type Created, type IdempotencyError, type IdempotencyRequest, type ListPage,
  type OrgScope, type PageRequest, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { orDieButOutage } from "@platter/postgres";
import { Database } from "../database.ts";
import { ClientEntity } from "../entities/index.ts";
import { isoTimestamp, readKeysetPage } from "../keyset-page.ts";
import { type OrgSql, orgSql, sql } from "../org-sql.ts";
import { createOnce } from "./idempotent-create.ts";
import { recordMessage } from "./webhook-message.ts";

/** Clients: keyset list by name and id, and creation with its `client.created` message. */

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
export const readClient = (org: OrgSql, id: number) =>
  Effect.map(org.oneValues<ClientRow>({ columns: COLUMNS, from: "clients", as: "c", where: sql`c.id = ${id}` }), toClient);

export class ClientRepository extends Context.Service<
  ClientRepository,
  {
    readonly list: (scope: OrgScope, page: PageRequest<readonly [string, number]>) => Effect.Effect<ListPage<Client>, DatabaseUnavailable>;
    readonly create: (
      scope: OrgScope,
      input: ClientCreate,
      idempotency?: IdempotencyRequest,
    ) => Effect.Effect<Created, IdempotencyError | DatabaseUnavailable>;
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
        create: (scope: OrgScope, input: ClientCreate, idempotency?: IdempotencyRequest) =>
          createOnce(orgSql(database, scope), idempotency, (tx) =>
            Effect.gen(function* () {
              const id = yield* tx.insert(ClientEntity, {
                name: input.name,
                email: input.email ?? null,
                phone: input.phone ?? null,
                company: input.company ?? null,
              });
              const client = yield* orDieButOutage(readClient(tx, id));
              yield* recordMessage(tx, { type: "client.created", data: client });
              return id;
            }),
          ),
      });
    }),
  );
}
