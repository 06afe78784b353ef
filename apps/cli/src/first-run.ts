import { ApiKeys, type DemoCounts, DemoData } from "@platter/application";
import { operatorActor } from "@platter/domain";
import type { PlatformRuntime } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { Effect } from "effect";

/**
 * First run of `npm start`: on a database without organizations, a demo organization with demo
 * data and one key of each kind, so the API can be tried at once. The keys are printed once; a
 * sign-in link to the Developer area is printed on every start.
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

/** Creates the demo organization when there is no organization yet; otherwise says what exists. */
export const prepareFirstRun = (platform: PlatformRuntime): Promise<Welcome> =>
  platform.runPromise(
    Effect.gen(function* () {
      const operator = yield* Operator;
      const organizations = yield* operator.organizations(SHOWN_ORGANIZATIONS);
      if (organizations.length > 0) return { kind: "existing", organizations } as const;
      const { id } = yield* Effect.orDie(operator.createOrganization(DEMO_ORGANIZATION));
      const scope = yield* Effect.orDie(operator.scopeOf(id));
      const seeded = yield* DemoData.seed(scope);
      const firstRun = operatorActor(scope, "npm start (first run)");
      const read = yield* ApiKeys.create(firstRun, "read");
      const write = yield* ApiKeys.create(firstRun, "read_write");
      return { kind: "demo", organizationId: id, seeded, readKey: read.key, writeKey: write.key } as const;
    }),
  );

/** Where the Developer area is, and a new sign-in link to the Developer area of `linkOrganizationOf(welcome)`. */
export interface DeveloperAreaWelcome {
  readonly url: string;
  readonly signInLink: string;
}

/**
 * The organization whose sign-in link every start prints: the demo organization made on the first
 * run, or on a later one the demo organization if it is among those listed, else the first of them.
 */
export const linkOrganizationOf = (welcome: Welcome): { readonly id: number; readonly name: string } =>
  welcome.kind === "demo"
    ? { id: welcome.organizationId, name: DEMO_ORGANIZATION.name }
    : welcome.organizations.find((organization) => organization.name === DEMO_ORGANIZATION.name) ?? welcome.organizations[0]!;

/** What `npm start` prints once the API listens: where it is, and how to make a first call. */
export const welcomeText = (welcome: Welcome, apiUrl: string, healthUrl: string, developerArea: DeveloperAreaWelcome): string => {
  const lines = [
    "", "Platter is running.", `  API:             ${apiUrl}`, `  Health:          ${healthUrl}`,
    `  Developer area:  ${developerArea.url}`, "",
  ];
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
  const linked = linkOrganizationOf(welcome);
  lines.push(
    "",
    `Sign in to the Developer area of ${linked.name} (the link works once, within 15 minutes):`,
    `  ${developerArea.signInLink}`,
    `Another link: npm run cli -- developer-area link --org ${linked.id}`,
    "Stop with Ctrl+C.",
    "",
  );
  return lines.join("\n");
};
