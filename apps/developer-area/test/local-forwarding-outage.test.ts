import { type ControlledPostgres, createOrganization, createSandbox, type OrganizationFixture, startControlledPostgres } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningArea, startArea } from "./developer-area-harness.ts";

/**
 * `platter listen`'s routes while the database is really stopped and started again (a PostgreSQL of
 * this test's own): every new request is answered at once with a 503 JSON error and Retry-After
 * (never a 500, a hang or a dropped connection), an open stream stays open through it, and once the
 * database is back the same stream hands over what happens next.
 */

let postgres: ControlledPostgres;
let area: RunningArea;
let sandbox: OrganizationFixture;

beforeAll(async () => {
  postgres = await startControlledPostgres();
  area = await startArea(postgres.adminUrl);
  sandbox = await createSandbox(area.db, await createOrganization(area.db, "Outage Kitchen"));
}, 60_000);
afterAll(async () => {
  await area?.stop().catch(() => {});
  await postgres?.dispose();
});

const headers = () => ({ authorization: `Bearer ${sandbox.writeKey}`, "content-type": "application/json" });
const trigger = () =>
  fetch(`${area.origin}/cli/trigger`, { method: "POST", headers: headers(), body: JSON.stringify({ type: "client.created" }), signal: AbortSignal.timeout(10_000) });

describe("the CLI's routes during a database outage", () => {
  it("answer 503 with Retry-After while it is down, keep the open stream, and hand over on it once it is back", async () => {
    const controller = new AbortController();
    const opened = await fetch(`${area.origin}/cli/listen?forward_to=${encodeURIComponent("http://localhost:4000/hook")}`, {
      headers: headers(), signal: controller.signal,
    });
    expect(opened.status).toBe(200);
    const reader = opened.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = "";
    const until = async (text: string) => {
      while (!received.includes(text)) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error(`the stream ended before "${text}":\n${received}`);
        received += chunk.value;
      }
    };
    await until("event: ready");

    await postgres.stop("fast");
    const answers = await Promise.all([
      fetch(`${area.origin}/cli/listen?forward_to=${encodeURIComponent("http://localhost:4000/hook")}`, { headers: headers(), signal: AbortSignal.timeout(10_000) }),
      trigger(),
      fetch(`${area.origin}/cli/listen/attempts`, {
        method: "POST", headers: headers(), signal: AbortSignal.timeout(10_000),
        body: JSON.stringify({ delivery_id: 1, lease_token: "00000000-0000-0000-0000-000000000000", status_code: 200, duration_ms: 1 }),
      }),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(await answer.json()).toEqual({ error: "The service is temporarily unavailable; retry shortly" });
    }

    await postgres.start();
    await expect.poll(async () => (await trigger()).status, { timeout: 15_000, interval: 200 }).toBe(201);
    await until("event: delivery");
    expect(received).toContain('"type":"client.created"');
    controller.abort();
  }, 60_000);
});
