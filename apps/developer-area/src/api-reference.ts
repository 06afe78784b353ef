import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { buildOpenApiDocument } from "@platter/contract";
import type { Context } from "koa";
import { html } from "./html.ts";
import { type SignedIn, signedInPage } from "./layout.ts";

/**
 * The API reference: the public API's OpenAPI document (built by `@platter/contract` from the domain's
 * Schemas, the same document `docs/openapi.json` is generated from), rendered in the browser by
 * Redoc's standalone bundle served from our own origin, and downloadable as JSON.
 */

/** The OpenAPI document as served at `/api-reference/openapi.json`: built once, on first use. */
let documentJson: string | undefined;
export const openApiJson = (): string => (documentJson ??= `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);

/** Redoc's standalone browser bundle (React, its styles and its search worker in one file), from node_modules, read once. */
export const REDOC_BUNDLE: Buffer = readFileSync(createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js"));

/**
 * The reference page's Content-Security-Policy: the area's own, plus what Redoc needs and nothing
 * more. Redoc styles its elements at run time, in `style` attributes and `<style>` elements
 * (styled-components, React), some of which no nonce reaches: `style-src 'unsafe-inline'`. Styles
 * run no script, and with images, fonts and connections still limited to `'self'` an injected
 * style could send nothing anywhere. Its search index runs in a Web Worker it makes from a `blob:`
 * URL of its own code: `worker-src blob:`. Scripts stay `'self'` only.
 */
export const allowRedoc = (ctx: Context): void => {
  const policy = ctx.response.get("content-security-policy");
  ctx.set("content-security-policy", `${policy.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")}; worker-src blob:`);
};

/** The API reference page: the download link, and the element Redoc renders into (`/assets/api-reference.js` starts it). */
export const apiReferencePage = (signedIn: SignedIn): string =>
  signedInPage(signedIn, "api-reference", "API reference", html`
    <div class="page-header page-header-split">
      <div>
        <h1>API reference</h1>
        <p class="lede">Every endpoint of the Platter API v1, its parameters, answers and errors, and the webhooks it sends.</p>
      </div>
      <a class="button" href="/api-reference/openapi.json" download="platter-openapi.json">Download OpenAPI document</a>
    </div>
    <div id="api-reference" class="api-reference" data-spec-url="/api-reference/openapi.json">
      <p class="muted" id="api-reference-loading">Loading the reference…</p>
    </div>
    <script src="/assets/redoc.standalone.js" defer></script>
    <script src="/assets/api-reference.js" defer></script>`);
