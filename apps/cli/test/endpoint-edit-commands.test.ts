import { userInfo } from "node:os";
import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, runCliJson } from "./cli-process.ts";

/** `platter endpoints update <id>` and `platter audit` as real processes; what they wrote is checked in SQL. */

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  env = { DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false" };
});
afterAll(() => db?.dispose());

const rows = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);
const OPERATOR = `${userInfo().username} via the CLI`;

/** An organization with one endpoint registered in-process. */
const endpointOfNewOrganization = async (url = "https://93.184.216.34/hooks") => {
  const org = (await createOrganization(db, "Edited by the CLI")).id;
  const { id } = await db.run(Effect.flatMap(Operator.use((o) => o.scopeOf(org)), (scope) =>
    WebhookEndpointRepository.use((endpoints) => endpoints.add(scope, url, [], generateSigningSecret()))));
  return { org, id };
};
const endpointRow = async (id: number) =>
  (await rows("select url, origin, event_types, description, enabled from webhook_endpoints where id = ?", [id]))[0];

describe("platter endpoints update", () => {
  it("changes the URL, types, description and enabled state, prints before and after, and audits them", async () => {
    const { org, id } = await endpointOfNewOrganization();
    const edited = await runCliJson([
      "endpoints", "update", String(id), "--url", "https://93.184.216.35:8443/new", "--types", "invoice.paid,invoice.sent",
      "--description", "Billing <sync>", "--disabled",
    ], env);
    expect(edited).toEqual({
      id, url: "https://93.184.216.35:8443/new", event_types: ["invoice.paid", "invoice.sent"], description: "Billing <sync>", enabled: false,
      changed: {
        before: { url: "https://93.184.216.34/hooks", event_types: [], description: null, enabled: true },
        after: { url: "https://93.184.216.35:8443/new", event_types: ["invoice.paid", "invoice.sent"], description: "Billing <sync>", enabled: false },
      },
    });
    expect(await endpointRow(id)).toEqual({
      url: "https://93.184.216.35:8443/new", origin: "https://93.184.216.35:8443", event_types: ["invoice.paid", "invoice.sent"],
      description: "Billing <sync>", enabled: false,
    });
    const text = await runCli(["webhook", "update", String(id), "--types", "all", "--enabled"], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`endpoint ${id} updated\nevent_types: ["invoice.paid","invoice.sent"] → []\nenabled: false → true\n`);

    // `platter audit` shows each edit with what it changed.
    const audit = await runCli(["audit", "--org", String(org), "--action", "webhook_endpoint.updated"], env);
    expect(audit.code).toBe(0);
    const lines = audit.stdout.trim().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^\\S+\\twebhook_endpoint\\.updated\\twebhook_endpoint ${id}\\t${OPERATOR}$`));
    // jsonb keeps the fields in an order of its own: compared as sets.
    expect(lines.slice(1, 3).sort()).toEqual(["    enabled: false → true", '    event_types: ["invoice.paid","invoice.sent"] → []']);
    expect(lines[3]).toMatch(new RegExp(`^\\S+\\twebhook_endpoint\\.updated\\twebhook_endpoint ${id}\\t${OPERATOR}$`));
    expect(lines.slice(4).sort()).toEqual([
      '    description: null → "Billing <sync>"',
      "    enabled: true → false",
      '    event_types: [] → ["invoice.paid","invoice.sent"]',
      '    url: "https://93.184.216.34/hooks" → "https://93.184.216.35:8443/new"',
    ]);
    const json = await runCliJson(["audit", "--org", String(org), "--limit", "1"], env);
    expect(json).toMatchObject({
      data: [{ action: "webhook_endpoint.updated", operator: OPERATOR, details: { before: { enabled: false }, after: { enabled: true } } }],
      has_more: true,
      next_cursor: expect.any(String),
    });
  });

  it.each([
    ["a URL the SSRF guard refuses", ["--url", "http://127.0.0.1:9/x"], 2, "Webhooks are sent only to public internet addresses, and 127.0.0.1 is not allowed."],
    ["a URL that is not one", ["--url", "ftp://93.184.216.34/x"], 2, "The URL must start with https:// (or http://)"],
    ["an unknown event type", ["--types", "invoice.paid,nope"], 2, 'unknown event type "nope"'],
    ["a description too long", ["--description", "x".repeat(501)], 2, "A description may be at most 500 characters"],
    ["both --enabled and --disabled", ["--enabled", "--disabled"], 2, "give --enabled or --disabled, not both"],
    ["nothing to change", [], 2, "nothing to change"],
  ])("refuses %s and writes nothing", async (_case, args, code, message) => {
    const { id } = await endpointOfNewOrganization();
    const before = { endpoint: await endpointRow(id), audit: await rows("select * from audit_log order by id") };
    const result = await runCliFailing(["endpoints", "update", String(id), ...args], env);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
    expect({ endpoint: await endpointRow(id), audit: await rows("select * from audit_log order by id") }).toEqual(before);
  });

  it("refuses another endpoint's URL of the organization", async () => {
    const { org, id } = await endpointOfNewOrganization("https://93.184.216.34/first");
    const second = await db.run(Effect.flatMap(Operator.use((o) => o.scopeOf(org)), (scope) =>
      WebhookEndpointRepository.use((endpoints) => endpoints.add(scope, "https://93.184.216.34/second", [], generateSigningSecret()))));
    const result = await runCliFailing(["endpoints", "update", String(second.id), "--url", "https://93.184.216.34/First/"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`is already endpoint ${id}`);
    expect(await endpointRow(second.id)).toMatchObject({ url: "https://93.184.216.34/second" });
  });

  it("says an endpoint that does not exist does not", async () => {
    const result = await runCliFailing(["endpoints", "update", "999999", "--description", "x"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("endpoint 999999 does not exist");
  });
});
