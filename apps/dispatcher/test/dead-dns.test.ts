import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { type DnsResponder, startDnsResponder } from "@platter/webhooks/testing";
import { afterEach, describe, expect, inject, it } from "vitest";
import {
  deliveriesOf, FRESH, freshLatencies, killLeftoverDispatchers, p99, type Receiver, startDispatcherProcess, startReceiver, waitFor,
} from "./dispatcher-harness.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * One organization's dead DNS never delays another organization: a dozen of its endpoints have
 * host names whose DNS server never answers, with deliveries queued for each, while another
 * organization's endpoint (a name the same server answers) keeps receiving its deliveries within a
 * second of their commit. The dead names' attempts fail with the lookup's timeout, said as such.
 * The DNS server is the test's own, on 127.0.0.1, given to the dispatcher as WEBHOOK_DNS_SERVERS.
 */

const DEAD_ENDPOINTS = 12;
const DEAD_BACKLOG_EACH = 40;
const DNS_TIMEOUT_MS = 2_000;

const databases: TestDatabase[] = [];
const receivers: Receiver[] = [];
const responders: DnsResponder[] = [];

afterEach(async () => {
  await killLeftoverDispatchers();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await Promise.all(responders.splice(0).map((r) => r.close()));
  await Promise.all(databases.splice(0).map((db) => db.dispose()));
});


describe("DNS that one organization cannot starve", () => {
  it(`keeps another organization's p99 under 1 s while ${DEAD_ENDPOINTS} endpoints' DNS never answers, and records the lookups' timeouts`, async () => {
    const db = await createTestDatabase(inject("pgAdminUrl"));
    databases.push(db);
    const dns = await startDnsResponder({
      answers: { "hooks.healthy.test": { address: "127.0.0.1", ttl: 60 } },
      silent: (name) => name.endsWith(".dead.test"),
    });
    responders.push(dns);
    const healthy = await startReceiver();
    receivers.push(healthy);

    // The troubled organization: a dozen endpoints on names nobody answers, each with a backlog.
    const troubled = await createOrganization(db, "Dead DNS Caterers");
    for (let i = 0; i < DEAD_ENDPOINTS; i++) {
      await db.run(WebhookEndpointRepository.use((r) => r.add(troubled.scope, `http://hook${i}.dead.test:${healthy.port}/webhooks`, [], generateSigningSecret())));
    }
    for (let i = 0; i < DEAD_BACKLOG_EACH; i++) {
      await db.run(Clients.create(apiKeyActor(troubled.scope), { name: `Backlog ${i}` }));
    }
    const dispatcher = await startDispatcherProcess(db.url, {
      WEBHOOK_DNS_SERVERS: dns.server,
      WEBHOOK_DNS_TIMEOUT: `${DNS_TIMEOUT_MS}ms`,
      WEBHOOK_TIMEOUT: "5s",
      WEBHOOK_LEASE: "15s",
      WEBHOOK_RETRY_SCHEDULE: "0s,1s,1s,1s",
    });
    await waitFor("the dead names to be asked", async () => dns.names().filter((n) => n.endsWith(".dead.test")).length >= 4 || undefined, 10_000);

    // The healthy organization commits one client at a time, about 20 a second, to its endpoint by name.
    const latencies = await freshLatencies(db, healthy, `http://hooks.healthy.test:${healthy.port}/webhooks`);
    console.info(`dead DNS beside: fresh deliveries p99 ${p99(latencies).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms`);
    expect(latencies).toHaveLength(FRESH);
    expect(p99(latencies)).toBeLessThan(1000);
    // Only the healthy organization's deliveries arrived, by name; its name was asked about once (then cached).
    expect(healthy.received.every((request) => request.headers.host === `hooks.healthy.test:${healthy.port}`)).toBe(true);
    expect(dns.questions("hooks.healthy.test", "A")).toBe(1);

    // The dead names' attempts failed with the lookup's timeout, said as such.
    const errors = await waitFor("attempts on the dead names to be recorded", async () => {
      const found = (await deliveriesOf(db, troubled.id)).flatMap((d) => d.attempts.map((a) => a.error));
      return found.length >= DEAD_ENDPOINTS ? found : undefined;
    });
    expect(errors).toEqual(errors.map(() => expect.stringMatching(new RegExp(`^ETIMEOUT: DNS lookup of hook\\d+\\.dead\\.test timed out after ${DNS_TIMEOUT_MS} ms$`))));
    expect((await dispatcher.terminate()).code).toBe(0);
  });
});
