import { WEBHOOK_EVENT_TYPES } from "@platter/domain";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, runCliJson } from "./cli-process.ts";

/**
 * `platter sandbox create|reset` and `platter trigger <type>` as real processes: the sandbox is
 * created once (its id printed), each trigger writes one message of its type in the sandbox and
 * nothing in the live organization, each is audited as the operator, and a live organization or a
 * bad type is refused with a clear message and nothing written. Checked in SQL.
 */

let db: TestDatabase;
let env: Record<string, string>;
let live: number;
let sandbox: number;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  env = { DATABASE_URL: db.url };
  live = (await createOrganization(db, "CLI Kitchen", "EUR")).id;
});
afterAll(() => db?.dispose());

const rows = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);
const messagesOf = async (id: number) =>
  (await rows<{ type: string }>("select type from webhook_messages where organization_id = ? order by id", [id])).map((row) => row.type);
const written = async (id: number) =>
  (await rows<Record<string, number>>(
    `select (select count(*)::int from webhook_messages where organization_id = ?) as messages,
       (select count(*)::int from clients where organization_id = ?) as clients,
       (select count(*)::int from audit_log where organization_id = ?) as audit`,
    [id, id, id],
  ))[0]!;

describe("platter sandbox", () => {
  it("creates the sandbox once and prints its id; again, the same id", async () => {
    const created = await runCliJson(["sandbox", "create", "--org", String(live), "--json"], env);
    sandbox = created.id;
    expect(created).toEqual({ id: expect.any(Number), created: true });
    expect(await runCliJson(["sandbox", "create", "--org", String(live), "--json"], env)).toEqual({ id: sandbox, created: false });
    expect(await rows("select name, sandbox_of from organizations where id = ?", [sandbox])).toEqual([{ name: "CLI Kitchen (sandbox)", sandbox_of: String(live) }]);
    expect(await rows("select action, operator from audit_log where organization_id = ?", [live]))
      .toEqual([{ action: "sandbox.created", operator: expect.stringMatching(/ via the CLI$/) }]);
    const human = await runCli(["sandbox", "create", "--org", String(live)], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(`organization ${live} already has sandbox organization ${sandbox}\n`);
  });

  it("refuses a sandbox of a sandbox with exit 1", async () => {
    const result = await runCliFailing(["sandbox", "create", "--org", String(sandbox)], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("a sandbox has no sandbox of its own");
  });

  it.each(WEBHOOK_EVENT_TYPES)("platter trigger %s makes one happen in the sandbox, audited, nothing in the live organization", async (type) => {
    const liveBefore = await written(live);
    const before = await messagesOf(sandbox);
    const triggered = await runCliJson(["trigger", type, "--org", String(sandbox), "--json"], env);
    expect(triggered).toEqual({ type, subject: expect.stringMatching(/^(client|event|invoice|proposal) \d+$/) });
    expect(await messagesOf(sandbox)).toEqual([...before, type]);
    expect(await written(live)).toEqual(liveBefore);
    expect(await rows("select action, subject from audit_log where organization_id = ? order by id desc limit 1", [sandbox]))
      .toEqual([{ action: "sandbox.triggered", subject: `${triggered.subject} (${type})` }]);
  });

  it("refuses a trigger or a reset in a live organization with exit 1 and writes nothing", async () => {
    const before = await written(live);
    const trigger = await runCliFailing(["trigger", "client.created", "--org", String(live)], env);
    expect(trigger.code).toBe(1);
    expect(trigger.stderr).toContain("This organization is not a sandbox");
    const reset = await runCliFailing(["sandbox", "reset", "--org", String(live)], env);
    expect(reset.code).toBe(1);
    expect(reset.stderr).toContain("This organization is not a sandbox");
    expect(await written(live)).toEqual(before);
  });

  it.each([
    ["an unknown type", ["trigger", "invoice.void", "--org", "1"], "type must be one of event.created"],
    ["no type", ["trigger", "--org", "1"], "Missing required positional argument"],
    ["a bad organization id", ["trigger", "client.created", "--org", "x"], "--org must be a positive integer"],
  ])("refuses %s as a usage error (exit 2), writing nothing", async (_what, args, message) => {
    const before = await written(sandbox);
    const result = await runCliFailing(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(await written(sandbox)).toEqual(before);
  });

  it("resets the sandbox's data, keeping its messages", async () => {
    const messages = await messagesOf(sandbox);
    const reset = await runCliJson(["sandbox", "reset", "--org", String(sandbox), "--json"], env);
    expect(reset).toMatchObject({ id: sandbox, recipes: 26, clients: 12 });
    expect(await written(sandbox)).toMatchObject({ clients: 12 });
    expect(await messagesOf(sandbox)).toEqual(messages);
  });
});
