import { Result } from "effect";
import { describe, expect, it } from "vitest";
import { parseAuditLogFilter } from "./audit-log.ts";

describe("parseAuditLogFilter", () => {
  it("reads every field; empty ones mean any, and `to` takes in its whole day", () => {
    expect(Result.getOrThrow(parseAuditLogFilter({ action: "api_key.created", actor: "session", from: "2026-11-20", to: "2026-11-24" }))).toEqual({
      action: "api_key.created", actor: "session", from: "2026-11-20T00:00:00.000Z", to: "2026-11-25T00:00:00.000Z",
    });
    expect(Result.getOrThrow(parseAuditLogFilter({ action: "", actor: " ", from: "", to: "" }))).toEqual({});
    expect(Result.getOrThrow(parseAuditLogFilter({ from: "2026-11-24", to: "2026-11-24" }))).toEqual({
      from: "2026-11-24T00:00:00.000Z", to: "2026-11-25T00:00:00.000Z",
    });
    expect(Result.getOrThrow(parseAuditLogFilter({ actor: ["operator", "session"] }))).toEqual({ actor: "operator" });
  });

  it.each([
    [{ action: "drop table" }, "action must be one of the actions in the log"],
    [{ action: "API_KEY.CREATED" }, "action must be one of the actions in the log"],
    [{ actor: "robot" }, "actor must be session, operator or api_key"],
    [{ from: "2026-02-30" }, "from must be a date written YYYY-MM-DD"],
    [{ from: "yesterday" }, "from must be a date written YYYY-MM-DD"],
    [{ to: "2026-11-24T10:00" }, "to must be a date written YYYY-MM-DD"],
    [{ from: "2026-11-24", to: "2026-11-23" }, "to must not be before from"],
  ])("refuses %j: %s", (query, message) => {
    const result = parseAuditLogFilter(query);
    expect(Result.isFailure(result) ? result.failure : undefined).toMatchObject({ _tag: "InvalidInput", message });
  });
});
