export * from "./dns-responder.ts";
