import { userInfo } from "node:os";
import type { WebhookEventType } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { createOrganization, createTestDatabase, openStoredEndpointSecret, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCliFailing, runCliJson } from "./cli-process.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/** `platter webhook add|list|enable|disable|rotate-secret` as real processes; what they wrote is checked in SQL. */

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  // The SSRF guard is on unless a test turns it off, whatever the surrounding environment says.
  env = { DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false" };
});
afterAll(() => db?.dispose());

const rows = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);

const endpointCount = async (): Promise<number> =>
  (await rows<{ n: number }>("select count(*)::int as n from webhook_endpoints"))[0]!.n;

const newOrganization = async (): Promise<number> => (await createOrganization(db, "Webhook Test")).id;

/** An endpoint registered in-process, for tests about the commands that manage existing endpoints. */
const registeredEndpoint = (organizationId: number, url = "https://93.184.216.34/hooks", types: WebhookEventType[] = []) =>
  db.run(
    Effect.flatMap(Operator.use((o) => o.scopeOf(organizationId)), (scope) =>
      WebhookEndpointRepository.use((endpoints) => endpoints.add(scope, url, types, generateSigningSecret())),
    ),
  );

/** A public address written as an IP literal, so registration needs no DNS. */
const PUBLIC_URL = "https://93.184.216.34/platter/hooks";
/** `whsec_` and 32 bytes in standard base64, as Standard Webhooks libraries read it. */
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe("platter webhook add", () => {
  it("registers an endpoint for the given event types and prints its signing secret", async () => {
    const org = await newOrganization();
    const added = await runCliJson(
      ["webhook", "add", "--org", String(org), "--url", PUBLIC_URL, "--events", "invoice.paid,invoice.sent"],
      env,
    );
    expect(added).toEqual({ id: expect.any(Number), secret: expect.stringMatching(SECRET) });
    const stored = await rows<{ secret: string }>("select organization_id::int, url, secret, event_types, enabled from webhook_endpoints where id = ?", [
      added.id,
    ]);
    expect(stored.map((row) => ({ ...row, secret: openStoredEndpointSecret(row.secret, org, added.id) }))).toEqual([
      { organization_id: org, url: PUBLIC_URL, secret: added.secret, event_types: ["invoice.paid", "invoice.sent"], enabled: true },
    ]);
    // Audited in its own transaction as the operator's: the operating-system user who ran the command.
    const audit = await rows("select organization_id::int, action, operator, session_id from audit_log where subject = ?", [`webhook_endpoint ${added.id}`]);
    expect(audit).toEqual([{ organization_id: org, action: "webhook_endpoint.added", operator: `${userInfo().username} via the CLI`, session_id: null }]);
  });

  it("subscribes to every event type when --events is left out", async () => {
    const org = await newOrganization();
    const added = await runCliJson(["webhook", "add", "--org", String(org), "--url", PUBLIC_URL], env);
    const [stored] = await rows<{ event_types: string[] }>("select event_types from webhook_endpoints where id = ?", [added.id]);
    expect(stored!.event_types).toEqual([]);
  });

  it("accepts a loopback URL when WEBHOOK_ALLOW_PRIVATE_NETWORKS=true", async () => {
    const org = await newOrganization();
    const added = await runCliJson(["webhook", "add", "--org", String(org), "--url", "http://127.0.0.1:9/x"], {
      ...env,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    });
    expect(added).toEqual({ id: expect.any(Number), secret: expect.stringMatching(SECRET) });
    const [stored] = await rows<{ url: string }>("select url from webhook_endpoints where id = ?", [added.id]);
    expect(stored!.url).toBe("http://127.0.0.1:9/x");
  });

  it.each([
    // The Developer area's checks and sentences: one application service registers for both.
    { url: "ftp://x", message: "The URL must start with https:// (or http://)" },
    { url: "not a url", message: "A URL may not contain spaces or control characters" },
    { url: "example.com/hook", message: "Enter a full URL, such as https://example.com/webhooks" },
    { url: "http://127.0.0.1:9/x", message: "Webhooks are sent only to public internet addresses, and 127.0.0.1 is not allowed." },
    { url: "http://localhost:9/x", message: "Webhooks are sent only to public internet addresses, and localhost has none: check the URL's host name." },
    { url: "http://no-such-host.invalid/x", message: "Webhooks are sent only to public internet addresses, and no-such-host.invalid has none: check the URL's host name." },
  ])("refuses the URL $url with exit 2 and registers nothing", async ({ url, message }) => {
    const org = await newOrganization();
    const before = await endpointCount();
    const result = await runCliFailing(["webhook", "add", "--org", String(org), "--url", url], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(await endpointCount()).toBe(before);
  });

  it("refuses a URL the organization already has, however written, with exit 2 naming its endpoint, and registers nothing", async () => {
    const org = await newOrganization();
    const { id } = await registeredEndpoint(org, PUBLIC_URL);
    const before = await endpointCount();
    const result = await runCliFailing(["webhook", "add", "--org", String(org), "--url", "HTTPS://93.184.216.34:443/platter/hooks"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`platter: HTTPS://93.184.216.34:443/platter/hooks is already endpoint ${id}: one endpoint per URL (compared ignoring case and a trailing slash); use that one.\n`);
    expect(await endpointCount()).toBe(before);
  });

  it("refuses an endpoint beyond WEBHOOK_ENDPOINTS_PER_ORGANIZATION (disabled ones count) with exit 2, saying so, and registers nothing", async () => {
    const org = await newOrganization();
    const limited = { ...env, WEBHOOK_ENDPOINTS_PER_ORGANIZATION: "2" };
    const first = await runCliJson(["webhook", "add", "--org", String(org), "--url", PUBLIC_URL], limited);
    await runCliJson(["webhook", "disable", "--id", String(first.id)], limited);
    await runCliJson(["webhook", "add", "--org", String(org), "--url", `${PUBLIC_URL}/second`], limited);
    const before = await endpointCount();
    const result = await runCliFailing(["webhook", "add", "--org", String(org), "--url", `${PUBLIC_URL}/third`], limited);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      "platter: This organization already has 2 webhook endpoints, the most it may have (disabled ones count). Reuse one of them, or ask your Platter contact to raise the limit.",
    );
    expect(await endpointCount()).toBe(before);
    expect(await rows("select id from webhook_endpoints where url = ?", [`${PUBLIC_URL}/third`])).toEqual([]);
  });

  it("refuses a WEBHOOK_ENDPOINTS_PER_ORGANIZATION that is not a positive integer with exit 2, naming it", async () => {
    const org = await newOrganization();
    const before = await endpointCount();
    const result = await runCliFailing(["webhook", "add", "--org", String(org), "--url", PUBLIC_URL], { ...env, WEBHOOK_ENDPOINTS_PER_ORGANIZATION: "0" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("configuration error: WEBHOOK_ENDPOINTS_PER_ORGANIZATION must be an integer between 1 and 10000");
    expect(await endpointCount()).toBe(before);
  });

  it("refuses an unknown event type with exit 2 and registers nothing", async () => {
    const org = await newOrganization();
    const before = await endpointCount();
    const result = await runCliFailing(
      ["webhook", "add", "--org", String(org), "--url", PUBLIC_URL, "--events", "invoice.paid,invoice.lost"],
      env,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown event type "invoice.lost"');
    expect(await endpointCount()).toBe(before);
  });

  it("fails with exit 1 for an unknown organization and registers nothing", async () => {
    const before = await endpointCount();
    const result = await runCliFailing(["webhook", "add", "--org", "999999", "--url", PUBLIC_URL], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("organization 999999 does not exist");
    expect(await endpointCount()).toBe(before);
  });
});

describe("platter webhook list", () => {
  it("lists the organization's endpoints, and only those", async () => {
    const org = await newOrganization();
    const first = await registeredEndpoint(org, "https://93.184.216.34/first");
    const second = await registeredEndpoint(org, "https://93.184.216.34/second", ["event.inquiry", "proposal.approved"]);
    await registeredEndpoint(await newOrganization(), "https://93.184.216.34/someone-else");

    const listed = await runCliJson(["webhook", "list", "--org", String(org)], env);
    expect(listed).toEqual({
      endpoints: [
        {
          id: first.id, url: "https://93.184.216.34/first", event_types: [], enabled: true, disabled_reason: null,
          created_at: expect.any(String), description: null, throttle_per_second: null, listener: null,
        },
        {
          id: second.id, url: "https://93.184.216.34/second", event_types: ["event.inquiry", "proposal.approved"], enabled: true,
          disabled_reason: null, created_at: expect.any(String), description: null, throttle_per_second: null, listener: null,
        },
      ],
    });
    // The signing secret is shown once, at registration, never in a listing.
    expect(JSON.stringify(listed)).not.toContain("whsec_");
  });

  it("lists nothing for an organization without endpoints", async () => {
    expect(await runCliJson(["webhook", "list", "--org", String(await newOrganization())], env)).toEqual({ endpoints: [] });
  });
});

describe("platter webhook disable, enable", () => {
  it("disables an endpoint (ending its pending deliveries) and enables it again, as the listing shows", async () => {
    const org = await newOrganization();
    const endpoint = await registeredEndpoint(org);
    const listed = async () => (await runCliJson(["webhook", "list", "--org", String(org)], env)).endpoints[0];
    const deliveries = () => rows<{ status: string; settled_reason: string | null }>(
      "select status, settled_reason from webhook_deliveries where endpoint_id = ? order by id", [endpoint.id],
    );
    await db.run(Effect.flatMap(Operator.use((o) => o.scopeOf(org)), (scope) => Clients.create(apiKeyActor(scope), { name: "Pending" })));
    expect(await deliveries()).toEqual([{ status: "pending", settled_reason: null }]);

    expect(await runCliJson(["webhook", "disable", "--id", String(endpoint.id)], env)).toEqual({ id: endpoint.id, enabled: false });
    expect(await listed()).toMatchObject({ id: endpoint.id, enabled: false, disabled_reason: "disabled by an operator" });
    expect(await deliveries()).toEqual([{ status: "failed", settled_reason: "endpoint disabled" }]);

    expect(await runCliJson(["webhook", "enable", "--id", String(endpoint.id)], env)).toEqual({ id: endpoint.id, enabled: true });
    expect(await listed()).toMatchObject({ id: endpoint.id, enabled: true, disabled_reason: null });
  });
});

describe("platter webhook rotate-secret", () => {
  it("replaces the signing secret with a new one; the old one keeps signing for the 24-hour overlap", async () => {
    const organizationId = await newOrganization();
    const endpoint = await registeredEndpoint(organizationId);
    const before = Date.now();
    const rotated = await runCliJson(["webhook", "rotate-secret", "--id", String(endpoint.id)], env);
    expect(rotated).toEqual({ id: endpoint.id, secret: expect.stringMatching(SECRET), previous_secret_until: expect.any(String) });
    expect(rotated.secret).not.toBe(endpoint.secret);
    const until = Date.parse(rotated.previous_secret_until) - before;
    expect(until).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(until).toBeLessThan(24 * 3600_000 + 60_000);
    const [stored] = await rows<{ secret: string; previous_secret: string; until: string }>(
      "select secret, previous_secret, to_json(previous_secret_until)#>>'{}' as until from webhook_endpoints where id = ?",
      [endpoint.id],
    );
    expect({
      secret: openStoredEndpointSecret(stored!.secret, organizationId, endpoint.id),
      previous_secret: openStoredEndpointSecret(stored!.previous_secret, organizationId, endpoint.id),
    }).toEqual({ secret: rotated.secret, previous_secret: endpoint.secret });
    expect(Date.parse(stored!.until)).toBe(Date.parse(rotated.previous_secret_until));
  });

  it("takes the overlap from WEBHOOK_SECRET_OVERLAP, and refuses a malformed one", async () => {
    const endpoint = await registeredEndpoint(await newOrganization());
    const before = Date.now();
    const rotated = await runCliJson(["webhook", "rotate-secret", "--id", String(endpoint.id)], { ...env, WEBHOOK_SECRET_OVERLAP: "1h" });
    expect(Date.parse(rotated.previous_secret_until) - before).toBeLessThan(3600_000 + 60_000);
    const refused = await runCliFailing(["webhook", "rotate-secret", "--id", String(endpoint.id)], { ...env, WEBHOOK_SECRET_OVERLAP: "a day" });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("WEBHOOK_SECRET_OVERLAP must be a duration");
  });
});

describe("an unknown endpoint id", () => {
  it.each([["disable"], ["enable"], ["rotate-secret"]])("fails `webhook %s` with exit 1", async (command) => {
    const result = await runCliFailing(["webhook", command, "--id", "999999"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("endpoint 999999 does not exist");
  });
});
