import { readFileSync } from "node:fs";
import type { Middleware } from "koa";
import { REDOC_BUNDLE } from "./api-reference.ts";

/** The area's stylesheet and scripts, read once at start and served from its own origin (nothing from a CDN). */
const ASSETS: ReadonlyMap<string, { readonly type: string; readonly body: Buffer }> = new Map([
  ["/assets/developer-area.css", { type: "text/css; charset=utf-8", body: readFileSync(new URL("./assets/developer-area.css", import.meta.url)) }],
  ["/assets/sandbox.css", { type: "text/css; charset=utf-8", body: readFileSync(new URL("./assets/sandbox.css", import.meta.url)) }],
  ["/assets/developer-area.js", { type: "text/javascript; charset=utf-8", body: readFileSync(new URL("./assets/developer-area.js", import.meta.url)) }],
  // The API reference: Redoc's standalone bundle from node_modules, and the script that starts it.
  ["/assets/redoc.standalone.js", { type: "text/javascript; charset=utf-8", body: REDOC_BUNDLE }],
  ["/assets/api-reference.js", { type: "text/javascript; charset=utf-8", body: readFileSync(new URL("./assets/api-reference.js", import.meta.url)) }],
]);

/** Serves `/assets/…` (GET and HEAD); they hold nothing secret, so a browser may keep them for a few minutes. */
export const serveAssets: Middleware = async (ctx, next) => {
  const asset = ctx.method === "GET" || ctx.method === "HEAD" ? ASSETS.get(ctx.path) : undefined;
  if (asset === undefined) return next();
  ctx.set("cache-control", "public, max-age=300");
  ctx.type = asset.type;
  ctx.body = asset.body;
};
