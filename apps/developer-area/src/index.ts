export * from "./app.ts";
export * from "./config.ts";
export * from "./server.ts";
/** Sign-in links are an application use case (`@platter/application`); re-exported for internal teams that import them from the area. */
export { createSignInLink, type SignInLink } from "@platter/application";
