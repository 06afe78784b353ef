import { createServer, type Server } from "node:http";
import { createDeveloperAreaApp } from "@platter/developer-area";
import { freePort } from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FeedMessage, PermissionError, Platter } from "../src/index.ts";
import { type SdkTestbed, startSdkTestbed } from "./sdk-testbed.ts";

/**
 * `platter.messages.list` against the real API and the real Developer area (which serves the
 * feed): records made through the SDK are read back as messages oldest first with `for await`,
 * each envelope parsed from its exact body; iterating again from the last `cursor` reads only what
 * came since; types filter; another organization's key reads none; a read-only key is refused; no `developerAreaUrl` is a TypeError.
 */

let bed: SdkTestbed;
let area: Server;
let areaOrigin: string;
beforeAll(async () => {
  bed = await startSdkTestbed();
  const port = await freePort();
  areaOrigin = `http://127.0.0.1:${port}`;
  const app = createDeveloperAreaApp(bed.db.runtime, { developerAreaUrl: areaOrigin, frameAncestors: "'self'" }, pino({ level: "silent" }));
  area = createServer(app.callback());
  await new Promise<void>((done) => area.listen(port, "127.0.0.1", done));
});
afterAll(async () => {
  area?.closeAllConnections();
  await new Promise((done) => area?.close(done));
  await bed?.close();
});

const envelopeIds = async (organizationId: number, after = 0): Promise<string[]> =>
  (await bed.sql<{ envelope_id: string }>("select envelope_id from webhook_messages where organization_id = ? and id > ? order by created_at, id", [organizationId, after]))
    .map((row) => row.envelope_id);

describe("platter.messages", () => {
  it("iterates the messages oldest first, and from the last cursor only the new ones", async () => {
    const platter = bed.platter({ developerAreaUrl: areaOrigin });
    for (const name of ["Ada", "Grace", "Edsger"]) await platter.clients.create({ name });
    const read: FeedMessage[] = [];
    for await (const m of platter.messages.list({ limit: 2 })) read.push(m);
    expect(read.map((m) => m.id)).toEqual(await envelopeIds(bed.org.id));
    for (const m of read) {
      expect(m.envelope).toEqual(JSON.parse(m.body!));
      expect(m.envelope).toMatchObject({ id: m.id, type: "client.created", created_at: m.created_at, data: { name: expect.any(String) } });
    }

    const [last] = await bed.sql<{ id: string }>("select max(id) as id from webhook_messages where organization_id = ?", [bed.org.id]);
    await platter.clients.create({ name: "Barbara" });
    await platter.events.create({ name: "Harvest supper" });
    const after: string[] = [];
    for await (const m of platter.messages.list({ after: read.at(-1)!.cursor, limit: 1 })) after.push(m.id);
    expect(after).toEqual(await envelopeIds(bed.org.id, Number(last!.id)));
    expect(after).toHaveLength(2);

    const events = await platter.messages.list({ types: ["event.created"] }).toArray();
    expect(events.map((m) => m.type)).toEqual(["event.created"]);
    expect(await platter.messages.list({ since: new Date(Date.now() + 3_600_000) }).toArray()).toEqual([]);
  });

  it("reads none of another organization's messages", async () => {
    const other = await bed.newOrganization("Other SDK Catering");
    const theirs = new Platter({ apiKey: other.writeKey, baseUrl: bed.baseUrl, developerAreaUrl: areaOrigin });
    expect(await theirs.messages.list().toArray()).toEqual([]);
  });

  it("needs a read/write key: a read-only one is a PermissionError", async () => {
    const reader = bed.platter({ apiKey: bed.org.readKey, developerAreaUrl: areaOrigin });
    await expect(reader.messages.list().toArray()).rejects.toBeInstanceOf(PermissionError);
  });

  it("needs the Developer area's origin", () => {
    expect(() => bed.platter().messages.list()).toThrow(/developerAreaUrl/);
    expect(() => bed.platter({ developerAreaUrl: "developers.example.com" })).toThrow(TypeError);
  });
});
