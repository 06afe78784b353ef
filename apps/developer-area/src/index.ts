export * from "./app.ts";
export * from "./config.ts";
export * from "./server.ts";
export * from "./sign-in-link.ts";
