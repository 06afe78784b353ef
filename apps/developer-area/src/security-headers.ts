import type { Middleware } from "koa";

/**
 * Headers on every response. The Content-Security-Policy allows only our own origin (no inline
 * script or style, no other site's resources, forms post only here) and lets `frameAncestors`
 * embed the area. Pages are per session and some show secrets, so none is stored by a cache.
 *
 * Referrer-Policy: `same-origin` sends no referrer to any other site, which is what keeps a
 * sign-in link's token from leaking. `no-referrer` would do that too, but browsers then send
 * `Origin: null` with every form POST (Fetch standard, "append a request Origin header"), and the
 * area checks Origin on every POST. The page a sign-in link opens answers with `strict-origin`
 * (at most the origin, never the path with the token), and its POST with `no-referrer`.
 */
export const securityHeaders =
  (frameAncestors: string): Middleware =>
  async (ctx, next) => {
    ctx.set({
      "content-security-policy":
        `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; ` +
        `form-action 'self'; frame-ancestors ${frameAncestors}`,
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      "cache-control": "no-store",
      "cross-origin-opener-policy": "same-origin",
    });
    await next();
  };
