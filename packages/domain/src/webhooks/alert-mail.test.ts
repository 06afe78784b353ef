import { Result } from "effect";
import { describe, expect, it } from "vitest";
import { alertMail, confirmationMail, parseAlertEmail } from "./alert-mail.ts";
import { recoveryWritten } from "./delivery-decision.ts";

const HEALTHY = { consecutiveFailures: 0, failingSinceMs: undefined, circuitOpenUntilMs: undefined, enabled: true, disabledReason: null, noticed: null };

describe("parseAlertEmail", () => {
  it.each([
    ["dev@example.com", "dev@example.com"],
    ["  Dev.Ops+alerts@Kitchen.Example.co.uk ", "dev.ops+alerts@kitchen.example.co.uk"],
  ])("accepts %j as %j", (raw, email) => {
    expect(Result.getOrThrow(parseAlertEmail(raw))).toBe(email);
  });

  it.each([
    ["", "Give an e-mail address"],
    ["dev", "email must be an address like dev@example.com"],
    ["dev@localhost", "email must be an address like dev@example.com"],
    ["Dev <dev@example.com>", "email must be an address like dev@example.com"],
    ["dev@example.com\nBcc: x@example.com", "email must be an address like dev@example.com"],
    ["dev@exa mple.com", "email must be an address like dev@example.com"],
    [`${"a".repeat(250)}@example.com`, "An e-mail address may be at most 254 characters"],
  ])("refuses %j: %s", (raw, message) => {
    const parsed = parseAlertEmail(raw);
    expect(Result.isFailure(parsed) && parsed.failure.message).toBe(message);
  });
});

describe("alert e-mails", () => {
  const notice = {
    kind: "failing" as const, endpointId: 12, endpointUrl: "https://hooks.example.com/platter", reason: "10 failed attempts in a row, so its circuit is open",
    at: "2026-11-30T10:00:00.000Z", disablesAt: null, endpointPage: "https://developers.example.com/webhooks/12",
    lastErrors: [{ at: "2026-11-30T09:59:59.000Z", statusCode: 500, error: null }, { at: "2026-11-30T09:59:58.000Z", statusCode: null, error: "timed out" }],
  };

  it("say the endpoint, the reason, the last errors and the link to its page", () => {
    const mail = alertMail(notice);
    expect(mail.subject).toBe("Platter: webhook endpoint 12 is failing");
    expect(mail.text).toContain("Your webhook endpoint https://hooks.example.com/platter (endpoint 12) is failing.");
    expect(mail.text).toContain("Why: 10 failed attempts in a row, so its circuit is open.");
    expect(mail.text).toContain("Its last errors:\n- 2026-11-30T09:59:59.000Z: HTTP 500\n- 2026-11-30T09:59:58.000Z: no answer (timed out)");
    expect(mail.text).toContain("See the endpoint: https://developers.example.com/webhooks/12");
  });

  it.each([
    ["disabling_soon", "is about to be disabled"],
    ["disabled", "was disabled"],
    ["recovered", "delivers again"],
  ] as const)("name the %s stage in the subject", (kind, words) => {
    expect(alertMail({ ...notice, kind }).subject).toBe(`Platter: webhook endpoint 12 ${words}`);
  });

  it("ask for confirmation with the link", () => {
    expect(confirmationMail("https://developers.example.com/alerts/confirm/abc").text).toContain("open this link within 24 hours: https://developers.example.com/alerts/confirm/abc");
  });
});

describe("recoveryWritten", () => {
  it.each([
    ["a success after a failing notice", "failing", null, true],
    ["a success after a disabling-soon notice", "disabling_soon", null, true],
    ["a success after failures that noticed nothing", null, null, false],
    ["more failures", "failing", "failing", false],
    ["a climb", "failing", "disabling_soon", false],
    ["a disabled endpoint's late result", "disabled", "disabled", false],
  ] as const)("%s: %s", (_name, before, after, written) => {
    expect(recoveryWritten({ ...HEALTHY, noticed: before }, { ...HEALTHY, noticed: after })).toBe(written);
  });
});
