import { HistoryPartitions, WEBHOOK_HISTORY, WebhookEndpointRepository } from "@platter/persistence";
import { backdateHistory, createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret, SETTLED_HISTORY_EXPIRED } from "@platter/domain";

/**
 * Disabling an endpoint in the Developer area ends its pending deliveries in the same transaction:
 * the log shows each as failed, "Ended: endpoint disabled"; a replay sends one again once the endpoint
 * is enabled (not before: pending, it would wait for ever); and the
 * retention sweep reaches their messages (a message with a pending delivery is never removed, so a
 * backlog left pending would have been kept for ever).
 */

let area: RunningArea;
let org: OrganizationFixture;
let session: TestSession;
let endpointId: number;
const DAY_MS = 24 * 3_600_000;

beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { allowPrivateNetworks: false });
  org = await createOrganization(area.db, "Disabling Caterers");
  session = await signIn(area, await area.link(org.id));
  endpointId = (await area.db.run(WebhookEndpointRepository.use((all) => all.add(org.scope, "https://198.51.100.33/backlog", [], generateSigningSecret())))).id;
  for (const name of ["Ada", "Grace", "Edsger"]) await area.db.run(Clients.create(apiKeyActor(org.scope), { name }));
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const deliveries = () =>
  rows<{ id: string; status: string; settled_reason: string | null; message_id: string; envelope_id: string }>(
    `select d.id, d.status, d.settled_reason, d.message_id, m.envelope_id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
     where d.endpoint_id = ? order by d.id`,
    [endpointId],
  );
const getPage = (path: string) => fetch(area.origin + path, { headers: { cookie: session.cookie }, redirect: "manual" });

describe("disabling an endpoint with pending deliveries", () => {
  it("ends them, shows them ended in the log, replays one, and lets retention remove the others' messages", async () => {
    expect((await deliveries()).map((d) => d.status)).toEqual(["pending", "pending", "pending"]);

    const disabled = await postForm(area, `/webhooks/${endpointId}/disable`, { form_token: session.formToken }, { cookie: session.cookie });
    expect(disabled.status).toBe(303);
    const ended = await deliveries();
    expect(ended.map((d) => [d.status, d.settled_reason])).toEqual([1, 2, 3].map(() => ["failed", "endpoint disabled"]));

    const log = await getPage("/deliveries");
    expect(log.status).toBe(200);
    expect((await log.text()).match(/Ended: endpoint disabled/g)).toHaveLength(3);

    // Replayed while the endpoint is disabled, nothing changes (pending, it would wait for ever); once enabled, it is sent again.
    const [replayed, ...others] = ended;
    const replay = () => postForm(
      area, `/deliveries/${replayed!.envelope_id}/replay`, { form_token: session.formToken, delivery: replayed!.id }, { cookie: session.cookie },
    );
    const refused = await replay();
    expect(refused.status).toBe(303);
    expect(refused.headers.get("location")).toBe(`/deliveries/${replayed!.envelope_id}?replayed=0`);
    expect((await deliveries())[0]).toMatchObject({ id: replayed!.id, status: "failed", settled_reason: "endpoint disabled" });
    const enabled = await postForm(area, `/webhooks/${endpointId}/enable`, { form_token: session.formToken }, { cookie: session.cookie });
    expect(enabled.status).toBe(303);
    const sent = await replay();
    expect(sent.status).toBe(303);
    expect(sent.headers.get("location")).toBe(`/deliveries/${replayed!.envelope_id}?replayed=1`);
    expect((await deliveries())[0]).toMatchObject({ id: replayed!.id, status: "pending", settled_reason: null });

    // A month later (the history moved back), with a 30-day window: the replayed one, pending still, is settled
    // ("history expired"), then the whole history goes with its partition.
    await backdateHistory(area.db.url, "m.organization_id = $1", [org.id], "now() - interval '31 days'");
    expect(await area.db.run(HistoryPartitions.use((h) => h.settleExpiring(30 * DAY_MS, 100)))).toBeGreaterThanOrEqual(1);
    expect((await deliveries())[0]).toMatchObject({ id: replayed!.id, status: "failed", settled_reason: SETTLED_HISTORY_EXPIRED });
    expect(await area.db.run(HistoryPartitions.use((h) => h.dropExpired(WEBHOOK_HISTORY, 30 * DAY_MS)))).toBeGreaterThanOrEqual(1);
    expect(await deliveries()).toEqual([]);
    expect(await rows("select id from webhook_messages where id in (?, ?)", others.map((d) => d.message_id))).toEqual([]);
  });
});
