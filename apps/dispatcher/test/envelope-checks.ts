import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { expect } from "vitest";
import { pythonHmacHex, type ReceivedRequest } from "./dispatcher-harness.ts";

/** The rules every delivered request obeys: envelope shape, signature, headers. */

const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface ExpectedEnvelope {
  readonly type: string;
  readonly secret: string;
  readonly dataId: number;
  readonly dataName: string;
  /** Header carrying the signature; the default one when not given. */
  readonly signatureHeader?: string;
}

/**
 * Checks one request: body is exactly `{id, type, created_at, data}` with `created_at` ISO 8601
 * UTC with milliseconds, `data.id`/`data.name` as expected, the signature header equal to
 * Python's HMAC-SHA256 of the raw bytes with the endpoint's secret, and the Standard Webhooks
 * headers accepted by the off-the-shelf verifiers (npm `standardwebhooks` and `svix`). Returns the envelope.
 */
export const expectSignedEnvelope = async (request: ReceivedRequest, expected: ExpectedEnvelope): Promise<any> => {
  const envelope = request.envelope;
  expect(request.headers["content-type"]).toBe("application/json");
  expect(Object.keys(envelope)).toEqual(["id", "type", "created_at", "data"]);
  expect(envelope.id).toMatch(/^evt_[0-9a-f]{32}$/);
  expect(request.headers["webhook-id"]).toBe(envelope.id);
  expect(envelope.type).toBe(expected.type);
  expect(envelope.created_at).toMatch(ISO_UTC_MS);
  expect(new Date(envelope.created_at).toISOString()).toBe(envelope.created_at);
  expect(envelope.data).toMatchObject({ id: expected.dataId, name: expected.dataName });
  const signature = request.headers[expected.signatureHeader ?? "x-platter-signature"];
  expect(signature).toMatch(/^[0-9a-f]{64}$/);
  expect(signature).toBe(await pythonHmacHex(expected.secret, request.rawBody));
  const standardHeaders = {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  };
  // The attempt's own time, well inside the verifiers' five-minute replay window.
  expect(Math.abs(Number(standardHeaders["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(300);
  // One signature, or one per secret during a rotation's overlap, space-separated.
  expect(standardHeaders["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)?$/);
  const raw = request.rawBody.toString("utf8");
  expect(new StandardWebhook(expected.secret).verify(raw, standardHeaders)).toEqual(envelope);
  // svix's verify returns nothing and throws on a bad signature or an old timestamp.
  expect(() => new SvixWebhook(expected.secret).verify(raw, standardHeaders)).not.toThrow();
  return envelope;
};
