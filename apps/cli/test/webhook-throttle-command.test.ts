import { userInfo } from "node:os";
import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, runCliJson } from "./cli-process.ts";

/** `platter webhook throttle` as real processes: what it wrote, and its audit rows, checked in SQL. */

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  env = { DATABASE_URL: db.url };
});
afterAll(() => db?.dispose());

const rows = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);

/** An organization's endpoint, registered in-process. */
const registeredEndpoint = async () => {
  const organizationId = (await createOrganization(db, "Throttle Test")).id;
  const endpoint = await db.run(
    Effect.flatMap(Operator.use((o) => o.scopeOf(organizationId)), (scope) =>
      WebhookEndpointRepository.use((endpoints) => endpoints.add(scope, "https://93.184.216.34/hooks", [], generateSigningSecret())),
    ),
  );
  return { organizationId, id: endpoint.id };
};

const throttleOf = async (id: number) =>
  (await rows<{ throttle_per_second: number | null }>("select throttle_per_second from webhook_endpoints where id = ?", [id]))[0]!.throttle_per_second;

describe("platter webhook throttle", () => {
  it("sets an endpoint's throttle, shows it in the list, removes it with --none, and audits each change as the operator's", async () => {
    const { organizationId, id } = await registeredEndpoint();
    expect(await runCliJson(["endpoints", "throttle", "--id", String(id), "--per-second", "5"], env)).toEqual({ id, throttle_per_second: 5 });
    expect(await throttleOf(id)).toBe(5);
    expect((await runCliJson(["webhook", "list", "--org", String(organizationId)], env)).endpoints).toMatchObject([{ id, throttle_per_second: 5 }]);
    const listed = await runCli(["webhook", "list", "--org", String(organizationId)], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("(at most 5/s)");
    // The same throttle again changes nothing, and writes no audit row.
    expect(await runCliJson(["webhook", "throttle", "--id", String(id), "--per-second", "5"], env)).toEqual({ id, throttle_per_second: 5 });
    const plain = await runCli(["webhook", "throttle", "--id", String(id), "--none"], env);
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim()).toBe(`endpoint ${id} throttle: none`);
    expect(await throttleOf(id)).toBeNull();
    const audit = await rows("select action, operator, details from audit_log where subject = ? order by id", [`webhook_endpoint ${id}`]);
    const operator = `${userInfo().username} via the CLI`;
    expect(audit).toEqual([
      { action: "webhook_endpoint.throttled", operator, details: { before: { throttle_per_second: null }, after: { throttle_per_second: 5 } } },
      { action: "webhook_endpoint.unthrottled", operator, details: { before: { throttle_per_second: 5 }, after: { throttle_per_second: null } } },
    ]);
  });

  it.each([
    [["--per-second", "0"], "from 1 to 1000, or none"],
    [["--per-second", "1001"], "from 1 to 1000, or none"],
    [["--per-second", "2.5"], "from 1 to 1000, or none"],
    [["--per-second", "fast"], "from 1 to 1000, or none"],
    [["--per-second", "none"], "Give --per-second a number, or --none"],
    [["--per-second", "5", "--none"], "Give either --per-second N or --none"],
    [[], "Give either --per-second N or --none"],
  ])("refuses %j with exit code 2 and changes nothing", async (flags, text) => {
    const { id } = await registeredEndpoint();
    await runCliJson(["webhook", "throttle", "--id", String(id), "--per-second", "3"], env);
    const refused = await runCliFailing(["webhook", "throttle", "--id", String(id), ...flags], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(text);
    expect(await throttleOf(id)).toBe(3);
  });

  it("says so for an endpoint that does not exist (exit code 1)", async () => {
    const refused = await runCliFailing(["webhook", "throttle", "--id", "999999", "--per-second", "5"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("endpoint 999999 does not exist");
  });
});
