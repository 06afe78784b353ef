import { createApiKey, createOrganization, type DemoCounts, type Orm, seedDemo } from "@platter/persistence";
import { runOperatorAction } from "./failures.ts";

/**
 * First run of `npm start`: on a database without organizations, a demo organization with demo
 * data and one key of each kind, so the API can be tried at once. The keys are printed once.
 */

export const DEMO_ORGANIZATION = { name: "Demo Catering Co.", currency: "EUR" } as const;

export interface DemoWelcome {
  readonly kind: "demo";
  readonly organizationId: number;
  readonly seeded: DemoCounts;
  readonly readKey: string;
  readonly writeKey: string;
}

export interface ExistingWelcome {
  readonly kind: "existing";
  /** The first few organizations, to say which ids keys can be created for. */
  readonly organizations: ReadonlyArray<{ readonly id: number; readonly name: string }>;
}

export type Welcome = DemoWelcome | ExistingWelcome;

const SHOWN_ORGANIZATIONS = 5;

const firstOrganizations = async (orm: Orm) => {
  const rows = await orm.em
    .getConnection()
    .execute<{ id: string; name: string }[]>("select id, name from organizations order by id limit ?", [SHOWN_ORGANIZATIONS]);
  return rows.map((row) => ({ id: Number(row.id), name: row.name }));
};

/** Creates the demo organization when there is no organization yet; otherwise says what exists. */
export const prepareFirstRun = async (orm: Orm): Promise<Welcome> => {
  const organizations = await firstOrganizations(orm);
  if (organizations.length > 0) return { kind: "existing", organizations };
  const { id } = await runOperatorAction(createOrganization(orm, DEMO_ORGANIZATION), "demo organization not created");
  const seeded = await seedDemo(orm, id);
  const read = await runOperatorAction(createApiKey(orm, id, "read"), `organization ${id} does not exist`);
  const write = await runOperatorAction(createApiKey(orm, id, "read_write"), `organization ${id} does not exist`);
  return { kind: "demo", organizationId: id, seeded, readKey: read.key, writeKey: write.key };
};

/** What `npm start` prints once the API listens: where it is, and how to make a first call. */
export const welcomeText = (welcome: Welcome, apiUrl: string, healthUrl: string): string => {
  const lines = ["", "Platter is running.", `  API:     ${apiUrl}`, `  Health:  ${healthUrl}`, ""];
  if (welcome.kind === "demo") {
    const { organizationId, seeded } = welcome;
    lines.push(
      `Created demo organization ${organizationId} "${DEMO_ORGANIZATION.name}" (${DEMO_ORGANIZATION.currency}) with ` +
        `${seeded.recipes} recipes, ${seeded.clients} clients, ${seeded.events} events and ${seeded.invoices} invoices.`,
      "Its API keys (shown only this once):",
      `  read-only:   ${welcome.readKey}`,
      `  read/write:  ${welcome.writeKey}`,
      "",
      "Try it:",
      `  curl -H "Authorization: Bearer ${welcome.readKey}" ${apiUrl}/events`,
      "",
      `More keys: npm run cli -- key create --org ${organizationId} --access read`,
    );
  } else {
    lines.push(
      "Organizations:",
      ...welcome.organizations.map((organization) => `  ${organization.id}  ${organization.name}`),
      "",
      `Create a key: npm run cli -- key create --org ${welcome.organizations[0]!.id} --access read`,
    );
  }
  lines.push("Stop with Ctrl+C.", "");
  return lines.join("\n");
};
