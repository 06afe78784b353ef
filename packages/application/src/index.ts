/**
 * Platter's application services: what an actor (a Developer-area session, the operator, an API key) does to an
 * organization's API keys, webhook endpoints, deliveries, request log, Developer-area sessions, audit log and sandbox. Each change runs its checks, the change
 * and its audit row in one transaction; the CLI and the Developer area call these, never the
 * repositories underneath (lint).
 */
export * from "./api-keys.ts";
export * from "./alert-recipients.ts";
export * from "./audit-entries.ts";
export * from "./deliveries.ts";
export * from "./request-logs.ts";
export * from "./developer-area-sessions.ts";
export * from "./webhook-endpoints.ts";
export * from "./sandbox.ts";
export { type DemoCounts, DemoData, seedDemo } from "./demo-data.ts";
export * from "./local-forwarding.ts";
export * from "./message-feed.ts";
export * from "./sign-in-links.ts";
export * from "./business-actions.ts";
export * from "./created-records.ts";
