import { Result } from "effect";
import { describe, expect, it } from "vitest";
import { encodeCursor } from "../cursor.ts";
import { InvalidCursor, InvalidInput } from "../errors.ts";
import { messageFeedListing, parseMessageFeedRequest } from "./message-feed.ts";

describe("parseMessageFeedRequest", () => {
  const cursor = encodeCursor(messageFeedListing.endpoint, ["2026-11-01T10:00:00.000Z", 42]);

  it.each<[string, Record<string, string>, unknown]>([
    ["nothing: every type from the oldest message", {}, { filter: { eventTypes: [] }, page: { limit: 100, after: undefined } }],
    ["types and a limit", { type: "invoice.paid, client.created", limit: "5" }, { filter: { eventTypes: ["invoice.paid", "client.created"] }, page: { limit: 5, after: undefined } }],
    ["since: just before its first message", { since: "2026-11-01T09:30" }, { filter: { eventTypes: [] }, page: { limit: 100, after: ["2026-11-01T09:30:00.000Z", 0] } }],
    ["a cursor: after its message", { cursor }, { filter: { eventTypes: [] }, page: { limit: 100, after: ["2026-11-01T10:00:00.000Z", 42] } }],
    ["a cursor and since: the cursor resumes", { cursor, since: "2026-01-01T00:00" }, { filter: { eventTypes: [] }, page: { limit: 100, after: ["2026-11-01T10:00:00.000Z", 42] } }],
  ])("reads %s", (_case, query, expected) => {
    expect(Result.getOrThrow(parseMessageFeedRequest(query))).toEqual(expected);
  });

  it.each<[string, Record<string, string>, unknown, string]>([
    ["an unknown type", { type: "invoice.deleted" }, InvalidInput, "unknown event type"],
    ["a since that is not a time", { since: "yesterday" }, InvalidInput, "since must be a time"],
    ["a since out of range", { since: "0999-01-01T00:00" }, InvalidInput, "since must be a time"],
    ["another list's cursor", { cursor: encodeCursor("deliveries", ["2026-11-01T10:00:00.000Z", 42]) }, InvalidCursor, ""],
    ["a cursor that is not one", { cursor: "abc" }, InvalidCursor, ""],
  ])("refuses %s", (_case, query, kind, text) => {
    const failure = Result.getOrThrow(Result.flip(parseMessageFeedRequest(query)));
    expect(failure).toBeInstanceOf(kind as new () => unknown);
    expect(String((failure as { message?: string }).message ?? "")).toContain(text);
  });
});
