import { userInfo } from "node:os";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret, SETTLED_ENDPOINT_DELETED } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, runCliJson } from "./cli-process.ts";

/**
 * `platter webhook delete <id> --yes` (also `platter endpoints delete`, the same command) as a real
 * process: refused without `--yes`; with it, the endpoint's queued deliveries end as "endpoint
 * deleted", its secrets are destroyed, it leaves the list, and the deletion is audited as the operator's.
 */

/** The command's words (`platter endpoints …` names the same commands as `platter webhook …`). */
const DELETE = ["endpoints", "delete"] as const; // `platter endpoints` is `platter webhook` under another name

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  env = { DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false" };
});
afterAll(() => db?.dispose());

const rows = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);

/** An organization with an endpoint and one queued delivery to it. */
const endpointWithQueuedDelivery = async (): Promise<{ org: OrganizationFixture; id: number }> => {
  const org = await createOrganization(db, "CLI deletes");
  const { id } = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://93.184.216.34/to-delete", [], generateSigningSecret())));
  await db.run(Clients.create(apiKeyActor(org.scope), { name: "Queued" }));
  return { org, id };
};

describe("platter webhook delete", () => {
  it("refuses without --yes, saying how to confirm, and deletes nothing", async () => {
    const { id } = await endpointWithQueuedDelivery();
    const refused = await runCliFailing([...DELETE, String(id)], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`deleting endpoint ${id} cannot be undone`);
    expect(refused.stderr).toContain("run it again with --yes");
    expect(await rows("select deleted_at, enabled from webhook_endpoints where id = ?", [id])).toEqual([{ deleted_at: null, enabled: true }]);
    expect(await rows("select status from webhook_deliveries where endpoint_id = ?", [id])).toEqual([{ status: "pending" }]);
  });

  it("with --yes deletes it: queued deliveries end, secrets destroyed, gone from the list, audited as the operator's", async () => {
    const { org, id } = await endpointWithQueuedDelivery();
    expect(await runCliJson([...DELETE, String(id), "--yes"], env)).toEqual({
      id, url: "https://93.184.216.34/to-delete", deleted: true, ended_deliveries: 1,
    });
    expect(await rows("select status, settled_reason from webhook_deliveries where endpoint_id = ?", [id]))
      .toEqual([{ status: "failed", settled_reason: SETTLED_ENDPOINT_DELETED }]);
    expect(await rows("select secret, previous_secret, enabled from webhook_endpoints where id = ?", [id]))
      .toEqual([{ secret: null, previous_secret: null, enabled: false }]);
    expect(await runCliJson(["webhook", "list", "--org", String(org.id)], env)).toEqual({ endpoints: [] });
    expect(await rows("select action, operator from audit_log where subject = ?", [`webhook_endpoint ${id}`]))
      .toEqual([{ action: "webhook_endpoint.deleted", operator: `${userInfo().username} via the CLI` }]);
  });

  it("says in words what it did without --json", async () => {
    const { id } = await endpointWithQueuedDelivery();
    const result = await runCli([...DELETE, String(id), "--yes"], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`endpoint ${id} (https://93.184.216.34/to-delete) deleted; 1 queued delivery ended as "endpoint deleted"\n`);
  });

  it("fails with exit 1 for an endpoint already deleted, and for an unknown one", async () => {
    const { id } = await endpointWithQueuedDelivery();
    await runCliJson([...DELETE, String(id), "--yes"], env);
    for (const gone of [id, 999_999]) {
      const result = await runCliFailing([...DELETE, String(gone), "--yes"], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`endpoint ${gone} does not exist`);
    }
  });

  it("leaves a deleted endpoint's deliveries unsent: platter deliveries retry fails with exit 1, saying why", async () => {
    const { id } = await endpointWithQueuedDelivery();
    await runCliJson([...DELETE, String(id), "--yes"], env);
    const [delivery] = await rows<{ id: string }>("select id from webhook_deliveries where endpoint_id = ?", [id]);
    const result = await runCliFailing(["deliveries", "retry", "--id", delivery!.id], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Its endpoint was deleted: nothing is sent to it again.");
    expect(await rows("select status from webhook_deliveries where endpoint_id = ?", [id])).toEqual([{ status: "failed" }]);
  });

  it.each([["abc"], ["0"]])("refuses the id %s with exit 2", async (id) => {
    const result = await runCliFailing([...DELETE, id, "--yes"], env);
    expect(result.code).toBe(2);
  });
});
