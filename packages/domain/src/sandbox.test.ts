import { Result } from "effect";
import { describe, expect, it } from "vitest";
import { parseSandboxTrigger, SANDBOX_TRIGGERS, sandboxName } from "./sandbox.ts";
import { WEBHOOK_EVENT_TYPES } from "./webhooks/message.ts";

describe("sandbox triggers", () => {
  it("offers every webhook event type", () => {
    expect([...SANDBOX_TRIGGERS].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    expect(SANDBOX_TRIGGERS).toHaveLength(6);
  });

  it.each(WEBHOOK_EVENT_TYPES)("reads %s", (type) => {
    expect(Result.getOrThrow(parseSandboxTrigger(type))).toBe(type);
  });

  it.each(["", "event", "invoice.void", "EVENT.CREATED", " event.created", "webhook.test"])("refuses %j, naming the field and the choices", (text) => {
    expect(parseSandboxTrigger(text)).toMatchObject({ failure: { message: expect.stringMatching(/^type must be one of event\.created, event\.inquiry, /) } });
  });

  it("names a sandbox after its live organization", () => {
    expect(sandboxName("Acme Catering")).toBe("Acme Catering (sandbox)");
  });
});
