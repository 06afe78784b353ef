export * from "./attempt-writer.ts";
export * from "./delivery-attempt.ts";
export * from "./dispatcher-time.ts";
export * from "./ssrf-guard.ts";
export * from "./webhook-dispatcher.ts";
export * from "./webhook-resolver.ts";
export * from "./alert-mailer.ts";
