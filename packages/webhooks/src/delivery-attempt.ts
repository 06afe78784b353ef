import { type AttemptResult, type DueDelivery, outcomeOf, signPayload, standardWebhookSignature } from "@platter/domain";
import { Agent, type Dispatcher } from "undici";
import { isForbiddenAddress, notAllowed, refuseForbidden } from "./ssrf-guard.ts";
import { defaultWebhookResolver, type WebhookResolver } from "./webhook-resolver.ts";

/** One signed POST of a delivery's exact bytes, and what came of it. */

export interface AttemptSettings {
  /** Header carrying the hex HMAC-SHA256 of the body. */
  readonly signatureHeader: string;
  readonly timeoutMs: number;
  readonly allowPrivateNetworks: boolean;
  /** Connections per origin (default `DEFAULT_ORIGIN_CONNECTIONS`); the dispatcher's claims never hold more of an origin's attempts. */
  readonly originConnections?: number | undefined;
}

/** How much of a receiver's response body is kept with its attempt: the first 1,024 bytes, the rest is not read. */
export const RESPONSE_BODY_BYTES = 1024;

/** Connections a dispatcher opens per origin unless `WEBHOOK_ORIGIN_CONNECTIONS` says otherwise. */
export const DEFAULT_ORIGIN_CONNECTIONS = 64;

/**
 * A keep-alive connection pool shared by every attempt; sockets look names up through `resolver`
 * (never libuv's thread pool), and with the guard they refuse internal addresses.
 */
export const createDeliveryAgent = (settings: AttemptSettings, resolver: WebhookResolver = defaultWebhookResolver()): Agent =>
  new Agent({
    keepAliveTimeout: 30_000,
    connections: settings.originConnections ?? DEFAULT_ORIGIN_CONNECTIONS,
    connect: { timeout: settings.timeoutMs, lookup: resolver.socketLookup(settings.allowPrivateNetworks ? undefined : refuseForbidden) },
  });

/** What a POST came back with: its status, and the first RESPONSE_BODY_BYTES of its body (undefined if the body broke off). */
interface Answer {
  readonly statusCode: number;
  readonly responseBody: string | undefined;
}

/** An attempt that reached its deadline (WEBHOOK_TIMEOUT): its lookup, connection, request and answer together. */
class AttemptTimedOut extends Error {
  readonly code = "ETIMEDOUT";
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms: timed out`);
  }
}

/**
 * One POST through `agent.dispatch`, reading the answer straight from undici's callbacks: no
 * response stream, no AbortSignal, no promise per chunk (each was CPU per delivery). Only the
 * first RESPONSE_BODY_BYTES are read; then the request is cut off (its connection closed), as is
 * an answer still incomplete at `deadline` (`performance.now()`), which fails with `AttemptTimedOut`.
 */
const post = (agent: Agent, url: URL, headers: Record<string, string>, body: string, timeoutMs: number, deadline: number): Promise<Answer> =>
  new Promise((done, fail) => {
    let statusCode: number | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    const answer = (responseBody: string | undefined) => {
      settled = true;
      clearTimeout(timer);
      done({ statusCode: statusCode!, responseBody });
    };
    const prefix = () => Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES).toString("utf8");
    const timer = setTimeout(() => {
      if (settled) return;
      const timedOut = new AttemptTimedOut(timeoutMs);
      controller?.abort(timedOut);
      // Headers in, body late: the status stands, the body is not kept (as when the body breaks off).
      if (statusCode !== undefined) return answer(undefined);
      settled = true;
      fail(timedOut);
    }, Math.max(0, deadline - performance.now()));
    agent.dispatch({
      origin: url.origin, path: `${url.pathname}${url.search}`, method: "POST", headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
    }, {
      onRequestStart: (started) => {
        controller = started;
        // Its deadline passed while it waited for a connection: it is not sent.
        if (settled) started.abort(new AttemptTimedOut(timeoutMs));
      },
      onResponseStart: (_, status) => {
        statusCode = status;
      },
      onResponseData: (reading, chunk) => {
        if (settled) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_BODY_BYTES) {
          answer(prefix());
          reading.abort(new Error("the rest of the response body is not read"));
        }
      },
      onResponseEnd: () => {
        if (!settled) answer(prefix());
      },
      onResponseError: (_, error) => {
        if (settled) return;
        if (statusCode !== undefined) return answer(undefined);
        settled = true;
        clearTimeout(timer);
        fail(error);
      },
    });
  });

const describeError = (error: unknown): string => {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code;
  const message = e.cause?.message ?? e.message ?? String(error);
  return code ? `${code}: ${message}` : message;
};

/**
 * The headers that carry a delivery's body and prove who sent it, signed at `timestamp` (Unix
 * seconds): the same for a dispatcher's attempt and a `platter listen` forward.
 */
export const signedHeaders = (
  delivery: Pick<DueDelivery, "envelopeId" | "secret" | "previousSecret" | "body">,
  timestamp: number,
  signatureHeader: string,
): Record<string, string> => ({
  "content-type": "application/json",
  // Standard Webhooks: the id is stable across retries; timestamp and signature are this attempt's.
  "webhook-id": delivery.envelopeId,
  "webhook-timestamp": String(timestamp),
  // During a rotation's overlap both secrets sign, space-separated: receivers with either verify.
  "webhook-signature": [delivery.secret, ...(delivery.previousSecret === undefined ? [] : [delivery.previousSecret])]
    .map((secret) => standardWebhookSignature(secret, delivery.envelopeId, timestamp, delivery.body))
    .join(" "),
  [signatureHeader]: signPayload(delivery.secret, delivery.body),
});

/**
 * Sends one attempt. Never throws: every failure (DNS, refused, timeout, TLS, SSRF) is a result.
 * Give it the resolver its agent was made with: the host is looked up on the delivery's
 * organization's behalf first, and the socket then connects to that answer.
 */
export const attemptDelivery = async (
  agent: Agent,
  delivery: DueDelivery,
  settings: AttemptSettings,
  resolver: WebhookResolver = defaultWebhookResolver(),
): Promise<AttemptResult> => {
  const startedAt = new Date();
  const began = performance.now();
  const finish = (statusCode: number | undefined, error: string | undefined, responseBody: string | undefined): AttemptResult => ({
    startedAt, durationMs: performance.now() - began, statusCode, error, responseBody, outcome: outcomeOf(statusCode),
  });
  // One deadline for the whole attempt, its DNS lookup included (WEBHOOK_DNS_TIMEOUT is at most WEBHOOK_TIMEOUT).
  const deadline = began + settings.timeoutMs;
  try {
    // Looked up on the organization's behalf, within its few lookups in flight; a literal IP is its own answer
    // (sockets never look one up, so this is where the guard sees it).
    const url = new URL(delivery.url);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const addresses = await resolver.lookup(host, delivery.organizationId);
    if (!settings.allowPrivateNetworks && addresses.some((a) => isForbiddenAddress(a.address))) {
      return finish(undefined, `ESSRF: refused: ${notAllowed(host)}`, undefined);
    }
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const headers = signedHeaders(delivery, timestamp, settings.signatureHeader);
    headers["user-agent"] = "Platter-Webhooks/1.0";
    const answer = await post(agent, url, headers, delivery.body, settings.timeoutMs, deadline);
    return finish(answer.statusCode, undefined, answer.responseBody);
  } catch (error) {
    return finish(undefined, describeError(error), undefined);
  }
};
