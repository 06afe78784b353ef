import { WebhookEndpoints } from "@platter/application";
import { type EndpointEdit, parseEventTypes, WEBHOOK_EVENT_TYPES } from "@platter/domain";
import { defineCommand } from "citty";
import { Result } from "effect";
import { givenId, idArgument, jsonFlag, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOrganization, inOwnerOf, runAction, withPlatform } from "../database-session.ts";
import { UsageError } from "../failures.ts";
import { report } from "../output.ts";
import { throttleCommand } from "./webhook-throttle.ts";

/** `platter webhook …`: endpoints that receive signed deliveries, each change audited as the operator's. A signing secret is shown once. */

const idArg = idArgument("Endpoint id");

const add = defineCommand({
  meta: {
    name: "add",
    description: "Register a webhook endpoint (prints its signing secret once); at most WEBHOOK_ENDPOINTS_PER_ORGANIZATION per organization",
  },
  args: {
    org: { type: "string", required: true, description: "Organization id" },
    url: { type: "string", required: true, description: "http(s) URL that receives POSTs" },
    events: { type: "string", description: `Comma-separated event types (default: all of ${WEBHOOK_EVENT_TYPES.join(", ")})` },
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const organizationId = positiveInteger("org", args.org);
    const types = parseEventTypes(args.events ?? "");
    if (Result.isFailure(types)) throw new UsageError(types.failure.message);
    const config = loadCliConfig();
    // The URL through the SSRF guard, on the organization's share of DNS look-ups, as in the Developer area.
    const created = await withPlatform(config, (platform) =>
      runAction(
        platform,
        inOrganization(organizationId, (operator) => WebhookEndpoints.register(operator, args.url, types.success, config)),
        `organization ${organizationId} does not exist`,
      ),
    );
    report(
      args.json,
      created,
      `registered endpoint ${created.id}; its signing secret:\n\n  ${created.secret}\n\nStore it now: it cannot be shown again.`,
    );
  },
});

const list = defineCommand({
  meta: { name: "list", description: "List an organization's webhook endpoints" },
  args: { org: { type: "string", required: true, description: "Organization id" }, json: jsonFlag },
  run: async ({ args }) => {
    const organizationId = positiveInteger("org", args.org);
    const endpoints = await withPlatform(loadCliConfig(), (platform) =>
      runAction(
        platform,
        inOrganization(organizationId, (operator) => WebhookEndpoints.list(operator)),
        `organization ${organizationId} does not exist`,
      ),
    );
    const lines = endpoints.map(
      (e) =>
        `${e.id}\t${e.enabled ? "enabled " : "disabled"}\t${e.url}\t${e.event_types.join(",") || "all events"}` +
        (e.disabled_reason ? `\t(${e.disabled_reason})` : "") + (e.throttle_per_second === null ? "" : `\t(at most ${e.throttle_per_second}/s)`),
    );
    report(args.json, { endpoints }, lines.join("\n") || "no endpoints");
  },
});

const toggle = (enabled: boolean) =>
  defineCommand({
    meta: { name: enabled ? "enable" : "disable", description: `${enabled ? "Enable" : "Disable"} a webhook endpoint` },
    args: { id: idArg, json: jsonFlag },
    run: async ({ args }) => {
      const id = givenId(args);
      const result = await withPlatform(loadCliConfig(), (platform) =>
        runAction(
          platform,
          inOwnerOf("webhook_endpoints", id, (operator) => WebhookEndpoints.setEnabled(operator, id, enabled)),
          `endpoint ${id} does not exist`,
        ),
      );
      report(args.json, { id: result.id, enabled: result.enabled }, `endpoint ${id} ${enabled ? "enabled" : "disabled"}`);
    },
  });

const update = defineCommand({
  meta: {
    name: "update",
    description: "Edit a webhook endpoint: its URL (checked as at registration), event types, description, enabled state; audited with before and after",
  },
  args: {
    id: idArg,
    url: { type: "string", description: "New http(s) URL; deliveries not yet sent go to it" },
    types: { type: "string", description: `Comma-separated event types, or "all" (known: ${WEBHOOK_EVENT_TYPES.join(", ")})` },
    description: { type: "string", description: "What the endpoint is for, at most 500 characters (\"\" removes it)" },
    enabled: { type: "boolean", description: "Enable it (a fresh start)" },
    disabled: { type: "boolean", description: "Disable it (its pending deliveries end)" },
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const id = givenId(args);
    if (args.enabled === true && args.disabled === true) throw new UsageError("give --enabled or --disabled, not both");
    const types = args.types === undefined ? undefined : args.types.trim() === "all" ? Result.succeed([]) : parseEventTypes(args.types);
    if (types !== undefined && Result.isFailure(types)) throw new UsageError(types.failure.message);
    if (types !== undefined && args.types?.trim() !== "all" && types.success.length === 0) {
      throw new UsageError('--types needs at least one event type, or "all"');
    }
    const edit: EndpointEdit = {
      ...(args.url === undefined ? {} : { url: args.url }),
      ...(types === undefined ? {} : { eventTypes: types.success }),
      ...(args.description === undefined ? {} : { description: args.description }),
      ...(args.enabled === true ? { enabled: true } : args.disabled === true ? { enabled: false } : {}),
    };
    if (Object.keys(edit).length === 0) throw new UsageError("nothing to change: give --url, --types, --description, --enabled or --disabled");
    const config = loadCliConfig();
    const edited = await withPlatform(config, (platform) =>
      runAction(platform, inOwnerOf("webhook_endpoints", id, (operator) => WebhookEndpoints.edit(operator, id, edit, config)), `endpoint ${id} does not exist`),
    );
    const changes = edited.details === undefined
      ? "nothing changed"
      : Object.keys(edited.details.after)
        .map((key) => `${key}: ${JSON.stringify(edited.details?.before[key])} → ${JSON.stringify(edited.details?.after[key])}`)
        .join("\n");
    report(args.json, { id, ...edited.after, changed: edited.details ?? null }, `endpoint ${id} updated\n${changes}`);
  },
});

const deleteEndpoint = defineCommand({
  meta: {
    name: "delete",
    description: "Delete a webhook endpoint (--yes to confirm): its queued deliveries end, its signing secrets are destroyed, its history stays until retention",
  },
  args: {
    id: idArg,
    yes: { type: "boolean", description: "Confirm the deletion: it cannot be undone" },
    json: jsonFlag,
  },
  run: async ({ args }) => {
    const id = givenId(args);
    if (args.yes !== true) {
      throw new UsageError(`deleting endpoint ${id} cannot be undone (its queued deliveries end, its signing secrets are destroyed): run it again with --yes`);
    }
    const deleted = await withPlatform(loadCliConfig(), (platform) =>
      runAction(platform, inOwnerOf("webhook_endpoints", id, (operator) => WebhookEndpoints.delete(operator, id)), `endpoint ${id} does not exist`),
    );
    report(
      args.json,
      { id, url: deleted.url, deleted: true, ended_deliveries: deleted.ended },
      `endpoint ${id} (${deleted.url}) deleted; ${deleted.ended} queued ${deleted.ended === 1 ? "delivery" : "deliveries"} ended as "endpoint deleted"`,
    );
  },
});

const rotateSecret = defineCommand({
  meta: {
    name: "rotate-secret",
    description: "Replace an endpoint's signing secret (prints the new one once); the old one keeps signing beside it for WEBHOOK_SECRET_OVERLAP",
  },
  args: { id: idArg, json: jsonFlag },
  run: async ({ args }) => {
    const id = givenId(args);
    const config = loadCliConfig();
    const result = await withPlatform(config, (platform) =>
      runAction(
        platform,
        inOwnerOf("webhook_endpoints", id, (operator) => WebhookEndpoints.rotateSecret(operator, id, config)),
        `endpoint ${id} does not exist`,
      ),
    );
    report(
      args.json,
      result,
      `new signing secret of endpoint ${id}:\n\n  ${result.secret}\n\n` +
        `The previous secret keeps signing beside it until ${result.previous_secret_until}.`,
    );
  },
});

export const webhookCommand = defineCommand({
  meta: { name: "webhook", description: "Manage webhook endpoints" },
  subCommands: { add, list, update, enable: toggle(true), disable: toggle(false), delete: deleteEndpoint, "rotate-secret": rotateSecret, throttle: throttleCommand },
});
