import { describe, expect, it } from "vitest";
import { failedMailOutcome } from "./alert-mailer.ts";

/** How an SMTP call's failure ends a mail: tried again only when the server certainly took nothing. */
describe("failedMailOutcome", () => {
  it.each([
    ["no connection", { code: "ECONNECTION", message: "connect ECONNREFUSED" }, 1, "retry"],
    ["no such host", { code: "EDNS", message: "getaddrinfo ENOTFOUND" }, 2, "retry"],
    ["a temporary refusal (4xx)", { code: "EENVELOPE", responseCode: 451, message: "451 try later" }, 1, "retry"],
    ["a permanent refusal (5xx)", { code: "EENVELOPE", responseCode: 550, message: "550 no such user" }, 1, "failed"],
    ["a connection lost mid-dialogue: it may have been taken", { code: "ESOCKET", message: "socket closed" }, 1, "failed"],
    ["a timeout after the greeting", { code: "ETIMEDOUT", message: "timeout" }, 1, "failed"],
    ["no connection on the last try", { code: "ECONNECTION", message: "connect ECONNREFUSED" }, 5, "failed"],
  ])("%s: %s", (_name, error, attempt, outcome) => {
    const decided = failedMailOutcome(Object.assign(new Error(error.message), error), attempt);
    expect(decided.outcome).toBe(outcome);
    expect(decided.outcome === "sent" ? "" : decided.error).toBe(error.message);
  });

  it("waits 1, 5, 30 and 120 minutes between tries", () => {
    const waits = [1, 2, 3, 4].map((attempt) => failedMailOutcome(Object.assign(new Error("down"), { code: "ECONNECTION" }), attempt));
    expect(waits.map((outcome) => (outcome.outcome === "retry" ? outcome.retryInMs : undefined))).toEqual([60_000, 300_000, 1_800_000, 7_200_000]);
  });
});
