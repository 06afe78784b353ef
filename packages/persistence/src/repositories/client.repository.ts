import { type Client, ClientRepository, clientListing, type OrgScope } from "@platter/domain";
import { Layer } from "effect";
import type { Orm } from "../database.ts";
import { ClientEntity } from "../entities/index.ts";
import { isoTimestamp, readKeysetPage, scopedSql } from "../scoped-sql.ts";
import { createOnce } from "./idempotent-create.ts";
import { recordOutboxEvent } from "./outbox.ts";

/** Clients: keyset list by name and id, and creation with its `client.created` event. */

interface ClientRow {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  company: string | null;
  created_at: string;
}

const SELECT = `select c.id, c.name, c.email, c.phone, c.company, ${isoTimestamp("c.created_at")} as created_at
  from clients c where c.organization_id = ?`;

const toClient = (row: ClientRow): Client => ({
  id: Number(row.id),
  name: row.name,
  email: row.email,
  phone: row.phone,
  company: row.company,
  created_at: row.created_at,
});

export const makeClientRepository = (orm: Orm): ClientRepository["Service"] => ({
  list: (scope, page) =>
    readKeysetPage(
      scopedSql(orm, scope),
      clientListing,
      { select: SELECT, keyColumns: ["c.name", "c.id"], keyCasts: ["text", "bigint"] },
      page,
      toClient,
    ),
  create: (scope: OrgScope, input, idempotency) =>
    createOnce(orm, scope, idempotency, async (em) => {
      const id = Number(
        await em.insert(ClientEntity, {
          organizationId: scope.organizationId,
          name: input.name,
          email: input.email ?? null,
          phone: input.phone ?? null,
          company: input.company ?? null,
        }),
      );
      const [row] = await em.execute<ClientRow[]>(`${SELECT} and c.id = ?`, [scope.organizationId, id]);
      await recordOutboxEvent(em, scope, { type: "client.created", data: toClient(row!) });
      return id;
    }),
});

export const ClientRepositoryLive = (orm: Orm) => Layer.succeed(ClientRepository, makeClientRepository(orm));
