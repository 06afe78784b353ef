import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { allEntities } from "../src/entities/index.ts";
import { ClientEntity } from "../src/entities/index.ts";
import { createTestDatabase, type TestDatabase } from "../src/testing/index.ts";

/** The entities are the schema model: a freshly migrated database must not differ from them in anything. */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

describe("schema", () => {
  it("has no difference between the migrated database and the entities", async () => {
    expect(await db.orm.schema.getUpdateSchemaSQL({ wrap: false })).toBe("");
  });

  it("has an entity for every table", async () => {
    const tables = await db.orm.em
      .getConnection()
      .execute<{ table_name: string }[]>(
        "select table_name from information_schema.tables where table_schema = 'public' and table_name <> 'mikro_orm_migrations' order by table_name",
      );
    const modelled = allEntities.map((entity) => entity.meta.tableName).sort();
    expect(modelled).toEqual(tables.map((row) => row.table_name));
  });

  it("writes through an entity with its relations given as ids", async () => {
    const [organization] = await db.orm.em.getConnection().execute<{ id: string }[]>(
      "insert into organizations (name, currency) values ('Schema Co', 'EUR') returning id",
    );
    const id = await db.orm.em.fork().insert(ClientEntity, {
      organization: Number(organization!.id), name: "Ada", email: null, phone: null, company: null,
    });
    const [row] = await db.orm.em.getConnection().execute("select organization_id, name from clients where id = ?", [id]);
    expect(row).toEqual({ organization_id: organization!.id, name: "Ada" });
  });
});
