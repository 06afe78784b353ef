import { type DatabaseUnavailable, decodeInput, InquiryReceive, type InvalidTransition, type NotFound } from "@platter/domain";
import { BusinessActions } from "@platter/application";
import { defineCommand } from "citty";
import { type Effect, Result } from "effect";
import { jsonFlag, positiveInteger } from "../arguments.ts";
import { loadCliConfig } from "../config.ts";
import { inOrganization, inOwnerOf, runAction, withPlatform } from "../database-session.ts";
import { UsageError } from "../failures.ts";
import { report } from "../output.ts";

/**
 * Business events made from the command line: `invoice send|pay`, `proposal approve`,
 * `inquiry receive`. Each changes state and records its webhook message in one transaction.
 */

const idArg = { type: "string", required: true, description: "Record id" } as const;

const invoiceAction = (name: "send" | "pay") =>
  defineCommand({
    meta: { name, description: name === "send" ? "Mark a draft invoice sent (invoice.sent)" : "Mark an invoice paid in full (invoice.paid)" },
    args: { id: idArg, json: jsonFlag },
    run: async ({ args }) => {
      const id = positiveInteger("id", args.id);
      const result = await withPlatform(loadCliConfig(), (platform) =>
        runAction(
          platform,
          inOwnerOf("invoices", id, (operator): Effect.Effect<{ readonly id: number; readonly status: "sent" | "paid" }, NotFound | InvalidTransition | DatabaseUnavailable, Effect.Services<ReturnType<typeof BusinessActions.sendInvoice>>> =>
            name === "send" ? BusinessActions.sendInvoice(operator, id) : BusinessActions.payInvoice(operator, id)),
          `invoice ${id} does not exist`,
        ),
      );
      report(args.json, result, `invoice ${id} is ${result.status}`);
    },
  });

export const invoiceCommand = defineCommand({
  meta: { name: "invoice", description: "Invoice business events" },
  subCommands: { send: invoiceAction("send"), pay: invoiceAction("pay") },
});

export const proposalCommand = defineCommand({
  meta: { name: "proposal", description: "Proposal business events" },
  subCommands: {
    approve: defineCommand({
      meta: { name: "approve", description: "Record a client's approval (proposal.approved)" },
      args: { id: idArg, json: jsonFlag },
      run: async ({ args }) => {
        const id = positiveInteger("id", args.id);
        const result = await withPlatform(loadCliConfig(), (platform) =>
          runAction(
            platform,
            inOwnerOf("proposals", id, (operator) => BusinessActions.approveProposal(operator, id)),
            `proposal ${id} does not exist`,
          ),
        );
        report(args.json, result, `proposal ${id} is approved`);
      },
    }),
  },
});

export const inquiryCommand = defineCommand({
  meta: { name: "inquiry", description: "Online catering requests" },
  subCommands: {
    receive: defineCommand({
      meta: { name: "receive", description: "Record a new online catering request (event.inquiry)" },
      args: {
        org: { type: "string", required: true, description: "Organization id" },
        name: { type: "string", required: true, description: "Who is asking" },
        email: { type: "string", description: "Their email" },
        phone: { type: "string", description: "Their phone" },
        "event-date": { type: "string", description: "Wished date, YYYY-MM-DD" },
        guests: { type: "string", description: "Number of guests" },
        json: jsonFlag,
      },
      run: async ({ args }) => {
        const organizationId = positiveInteger("org", args.org);
        const input = decodeInput(InquiryReceive, {
          name: args.name,
          ...(args.email === undefined ? {} : { email: args.email }),
          ...(args.phone === undefined ? {} : { phone: args.phone }),
          ...(args["event-date"] === undefined ? {} : { event_date: args["event-date"] }),
          ...(args.guests === undefined ? {} : { guests: positiveInteger("guests", args.guests) }),
        });
        if (Result.isFailure(input)) throw new UsageError(input.failure.message);
        const result = await withPlatform(loadCliConfig(), (platform) =>
          runAction(
            platform,
            inOrganization(organizationId, (operator) => BusinessActions.receiveInquiry(operator, input.success)),
            `organization ${organizationId} does not exist`,
          ),
        );
        report(args.json, result, `inquiry recorded as event ${result.id} (client ${result.client_id})`);
      },
    }),
  },
});
