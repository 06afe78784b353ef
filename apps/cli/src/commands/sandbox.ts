import { Sandbox } from "@platter/application";
import { parseSandboxTrigger, SANDBOX_TRIGGERS } from "@platter/domain";
import { defineCommand } from "citty";
import { Result } from "effect";
import { jsonFlag, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOrganization, runAction, withPlatform } from "../database-session.ts";
import { UsageError } from "../failures.ts";
import { report } from "../output.ts";

/**
 * `platter sandbox create|reset` and `platter trigger <type>`: an organization's linked sandbox
 * (its own `platter_test_…` keys and demo data), and each of the six event types made to happen
 * for real in it, so its endpoints get real deliveries. Each is audited as the operator; a live
 * organization is refused (exit 1) for a reset or a trigger.
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
  meta: { name: "trigger", description: `Make one business event happen for real in a sandbox (${SANDBOX_TRIGGERS.join(", ")})` },
  args: {
    type: { type: "positional", required: true, description: `Event type: ${SANDBOX_TRIGGERS.join(", ")}` },
    org: orgArg("Sandbox organization id"),
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const type = parseSandboxTrigger(String(args.type));
    if (Result.isFailure(type)) throw new UsageError(type.failure.message);
    const organizationId = positiveInteger("org", args.org);
    const triggered = await withPlatform(loadCliConfig(), (platform) =>
      runAction(platform, inOrganization(organizationId, (operator) => Sandbox.trigger(operator, type.success)), `organization ${organizationId} does not exist`),
    );
    report(args.json, triggered, `${triggered.type}: ${triggered.subject} in sandbox organization ${organizationId}`);
  },
});
