import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCliFailing, runCliJson } from "./cli-process.ts";

/**
 * One id style for every `platter webhook` (`platter endpoints`) subcommand that acts on one
 * endpoint: `--id N`, the documented one, and the id alone (`N`) as its alias. Each case gives the
 * style its command did not take before (update and delete took only `N`, the others only `--id N`).
 */

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  env = { DATABASE_URL: db.url };
});
afterAll(() => db?.dispose());

/** A new endpoint of a new organization. */
const endpoint = async (): Promise<number> => {
  const org = await createOrganization(db, "Id styles");
  return (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, `https://93.184.216.34/${org.id}`, [], generateSigningSecret())))).id;
};

describe("an endpoint's id, as --id N or N alone", () => {
  it.each<[string, (id: string) => string[], (id: number) => Record<string, unknown>]>([
    ["update --id N", (id) => ["webhook", "update", "--id", id, "--description", "Kitchen"], (id) => ({ id, description: "Kitchen" })],
    ["delete --id N", (id) => ["endpoints", "delete", "--id", id, "--yes"], (id) => ({ id, deleted: true })],
    ["disable N", (id) => ["webhook", "disable", id], (id) => ({ id, enabled: false })],
    ["enable N", (id) => ["endpoints", "enable", id], (id) => ({ id, enabled: true })],
    ["rotate-secret N", (id) => ["webhook", "rotate-secret", id], () => ({ secret: expect.stringMatching(/^whsec_/) })],
    ["throttle N", (id) => ["webhook", "throttle", id, "--per-second", "4"], (id) => ({ id, throttle_per_second: 4 })],
  ])("%s", async (_style, command, expected) => {
    const id = await endpoint();
    expect(await runCliJson(command(String(id)), env)).toMatchObject(expected(id));
  });

  it.each([
    ["both styles at once", ["webhook", "update", "--id", "1", "1", "--description", "x"], "give the id once, as --id N or N alone, not both"],
    ["no id", ["webhook", "disable"], "--id is required (or give the id alone: N)"],
    ["a second id", ["webhook", "delete", "1", "2", "--yes"], 'unexpected argument "2"'],
    ["a malformed id", ["webhook", "enable", "x"], '--id must be a positive integer, got "x"'],
  ])("refuses %s with exit code 2", async (_what, command, message) => {
    const refused = await runCliFailing(command, env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(message);
  });
});
