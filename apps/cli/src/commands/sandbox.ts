import { Sandbox } from "@platter/application";
import { parseSandboxTrigger, SANDBOX_TRIGGERS } from "@platter/domain";
import { defineCommand } from "citty";
import { Result } from "effect";
import { jsonFlag, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOrganization, runAction, withPlatform } from "../database-session.ts";
import { connectionOf, DeveloperAreaClient } from "../developer-area-client.ts";
import { UsageError } from "../failures.ts";
import { report } from "../output.ts";

/**
 * `platter sandbox create|reset` and `platter trigger <type>`: an organization's linked sandbox
 * (its own `platter_test_…` keys and demo data), and each of the six event types made to happen
 * for real in it, so its endpoints get real deliveries. Each is audited as the operator; a live
 * organization is refused (exit 1) for a reset or a trigger. `platter trigger` without `--org` takes
 * a sandbox's read/write API key instead and asks the Developer area (`POST /cli/trigger`), audited
 * as the key; that way opens no database.
 */

const orgArg = (description: string) => ({ type: "string", required: true, description }) as const;

export const sandboxCommand = defineCommand({
  meta: { name: "sandbox", description: "An organization's sandbox: create it, reset its demo data" },
  subCommands: {
    create: defineCommand({
      meta: { name: "create", description: "Create the live organization's sandbox with the demo data (prints its id; again, changes nothing)" },
      args: { org: orgArg("Live organization id"), json: jsonFlag },
      run: async ({ args }) => {
        const organizationId = positiveInteger("org", args.org);
        const result = await withPlatform(loadCliConfig(), (platform) =>
          runAction(platform, inOrganization(organizationId, (operator) => Sandbox.create(operator)), `organization ${organizationId} does not exist`),
        );
        report(args.json, { id: result.id, created: result.created },
          result.created ? `created sandbox organization ${result.id} of organization ${organizationId}` : `organization ${organizationId} already has sandbox organization ${result.id}`);
      },
    }),
    reset: defineCommand({
      meta: { name: "reset", description: "Delete a sandbox's business data and seed the demo data again (keys, endpoints and deliveries stay)" },
      args: { org: orgArg("Sandbox organization id"), json: jsonFlag },
      run: async ({ args }) => {
        const organizationId = positiveInteger("org", args.org);
        const counts = await withPlatform(loadCliConfig(), (platform) =>
          runAction(platform, inOrganization(organizationId, (operator) => Sandbox.reset(operator)), `organization ${organizationId} does not exist`),
        );
        report(args.json, { id: organizationId, ...counts },
          `reset sandbox organization ${organizationId}: ${counts.recipes} recipes, ${counts.clients} clients, ${counts.events} events, ${counts.invoices} invoices`);
      },
    }),
  },
});

export const triggerCommand = defineCommand({
  meta: {
    name: "trigger",
    description: `Make one business event happen for real in a sandbox (${SANDBOX_TRIGGERS.join(", ")}): with --org through the database, or with a sandbox's read/write API key through the Developer area`,
  },
  args: {
    type: { type: "positional", required: true, description: `Event type: ${SANDBOX_TRIGGERS.join(", ")}` },
    org: { type: "string", description: "Sandbox organization id (the operator's way, through the database); without it, the API key's sandbox" },
    "api-key": { type: "string", description: "Without --org: a sandbox's read/write API key, platter_test_rw_… (default: PLATTER_API_KEY)" },
    "developer-area-url": { type: "string", description: "Without --org: the Developer area's origin (default: PLATTER_DEVELOPER_AREA_URL, else http://localhost:3001)" },
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const type = parseSandboxTrigger(String(args.type));
    if (Result.isFailure(type)) throw new UsageError(type.failure.message);
    if (args.org === undefined) {
      // With a key: the Developer area makes it happen in the key's sandbox; the database is never opened here.
      const client = new DeveloperAreaClient(connectionOf(args, "a sandbox's read/write key, platter_test_rw_…; or give --org <sandbox organization id>"));
      try {
        const triggered = await client.trigger(type.success);
        report(args.json, triggered, `${triggered.type}: ${triggered.subject}`);
      } finally {
        await client.close();
      }
      return;
    }
    for (const flag of ["api-key", "developer-area-url"] as const) {
      if (args[flag] !== undefined) throw new UsageError(`--${flag} is for a trigger with an API key: give it or --org, not both`);
    }
    const organizationId = positiveInteger("org", args.org);
    const triggered = await withPlatform(loadCliConfig(), (platform) =>
      runAction(platform, inOrganization(organizationId, (operator) => Sandbox.trigger(operator, type.success)), `organization ${organizationId} does not exist`),
    );
    report(args.json, triggered, `${triggered.type}: ${triggered.subject} in sandbox organization ${organizationId}`);
  },
});
