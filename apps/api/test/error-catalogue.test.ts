import { errorAnswer } from "@platter/domain";
import { watchOutages } from "@platter/ops";
import { ERROR_SAMPLES, type ErrorSampleServer, serveErrorSamples } from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorResponse } from "../src/middleware/error-response.ts";

/**
 * The API's edge of the error catalogue: every tagged error the catalogue knows, thrown below the
 * API's error answer, is answered over HTTP with the catalogue's status, headers and text as
 * `{"error": …}`; anything else is an opaque 500. (`ERROR_SAMPLES` has one of each: a new tagged
 * error without one does not compile.)
 */

let server: ErrorSampleServer;
let origin: string;
const logged: Array<Record<string, unknown>> = [];
let downs = 0;

beforeAll(async () => {
  const logger = pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
  const outages = watchOutages({ probe: async () => {}, onDown: () => void downs++, onUp: () => {}, probeEveryMs: 10 });
  const answer = errorResponse(logger, outages);
  server = await serveErrorSamples(async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      answer(ctx, thrown);
    }
  });
  origin = server.origin;
});
afterAll(() => server.close());

describe("the API's answer to each error of the catalogue", () => {
  it.each(Object.values(ERROR_SAMPLES).map((error) => [error._tag, error] as const))("%s", async (tag, error) => {
    const expected = errorAnswer(error);
    const response = await fetch(`${origin}/${tag}`);
    expect(response.status).toBe(expected.status);
    for (const [name, value] of Object.entries(expected.headers ?? {})) expect(response.headers.get(name)).toBe(value);
    expect(await response.json()).toEqual({ error: expected.text });
  });

  it("answers a defect with an opaque 500 and logs it; an outage is told to the outage watch", async () => {
    const defect = await fetch(`${origin}/defect`);
    expect(defect.status).toBe(500);
    expect(await defect.json()).toEqual({ error: "Internal server error" });
    expect(logged.filter((line) => line["msg"] === "unhandled error")).toHaveLength(1);
    const outage = await fetch(`${origin}/DatabaseUnavailable`);
    expect(outage.status).toBe(503);
    await outage.arrayBuffer();
    expect(downs).toBeGreaterThan(0);
  });
});
