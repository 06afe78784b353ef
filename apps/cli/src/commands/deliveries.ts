import { Deliveries } from "@platter/application";
import { DELIVERY_STATUSES } from "@platter/persistence";
import { defineCommand } from "citty";
import { jsonFlag, oneOf, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOrganization, inOwnerOf, runAction, withPlatform } from "../database-session.ts";
import { UsageError } from "../failures.ts";
import { report } from "../output.ts";

/**
 * `platter deliveries …`: what was sent where, every attempt, and sending deliveries now: a finished
 * one again, a pending one without waiting for its next try (as the Developer area's replay does),
 * audited as the operator's.
 */

const STATUSES = DELIVERY_STATUSES;

const list = defineCommand({
  meta: { name: "list", description: "List deliveries (newest first) with their attempts" },
  args: {
    org: { type: "string", required: true, description: "Organization id" },
    status: { type: "string", description: STATUSES.join(" | ") },
    endpoint: { type: "string", description: "Only this endpoint id" },
    limit: { type: "string", default: "100", description: "At most this many (1-1000)" },
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const organizationId = positiveInteger("org", args.org);
    const filter = {
      ...(args.status === undefined ? {} : { status: oneOf("status", args.status, STATUSES) }),
      ...(args.endpoint === undefined ? {} : { endpointId: positiveInteger("endpoint", args.endpoint) }),
      limit: Math.min(positiveInteger("limit", args.limit), 1000),
    };
    const deliveries = await withPlatform(loadCliConfig(), (platform) =>
      runAction(
        platform,
        inOrganization(organizationId, (operator) => Deliveries.list(operator, filter)),
        `organization ${organizationId} does not exist`,
      ),
    );
    const lines = deliveries.map((d) => {
      const last = d.attempts[d.attempts.length - 1];
      const outcome = last ? ` last: ${last.status_code ?? last.error}` : "";
      return `${d.id}\t${d.status}\t${d.event_type}\t${d.envelope_id}\tendpoint ${d.endpoint_id}\t${d.attempts.length} attempt(s)${outcome}`;
    });
    report(args.json, { deliveries }, lines.join("\n") || "no deliveries");
  },
});

const retry = defineCommand({
  meta: {
    name: "retry",
    description: "Send a delivery now (--id): again when finished, at once when waiting to retry; or every failing one of an endpoint",
  },
  args: {
    id: { type: "string", description: "Delivery id" },
    "all-failed": { type: "boolean", default: false, description: "Every failed delivery of --endpoint, and every one waiting to retry" },
    endpoint: { type: "string", description: "Endpoint id (with --all-failed)" },
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const config = loadCliConfig();
    if (args["all-failed"] && args.id !== undefined) throw new UsageError("give either --id or --all-failed, not both");
    if (args["all-failed"]) {
      const endpointId = positiveInteger("endpoint", args.endpoint);
      const result = await withPlatform(config, (platform) =>
        runAction(
          platform,
          inOwnerOf("webhook_endpoints", endpointId, (operator) => Deliveries.replayFailed(operator, endpointId)),
          `endpoint ${endpointId} does not exist`,
        ),
      );
      return report(args.json, result, `${result.retried} failing deliveries of endpoint ${endpointId} are due now`);
    }
    if (args.id === undefined) throw new UsageError("give --id <delivery>, or --all-failed --endpoint <id>");
    const id = positiveInteger("id", args.id);
    const result = await withPlatform(config, (platform) =>
      runAction(
        platform,
        inOwnerOf("webhook_deliveries", id, (operator) => Deliveries.replay(operator, id)),
        `delivery ${id} does not exist`,
      ),
    );
    report(args.json, result, result.retried === 1 ? `delivery ${id} is due now` : `delivery ${id} is already due: nothing changed`);
  },
});

export const deliveriesCommand = defineCommand({
  meta: { name: "deliveries", description: "Inspect and retry webhook deliveries" },
  subCommands: { list, retry },
});
