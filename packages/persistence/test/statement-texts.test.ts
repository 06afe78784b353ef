import { authenticatedScope } from "@platter/domain";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { updateStatement } from "../src/org-sql.ts";
import { createTestDatabase, nothingHeld, type TestDatabase, testDeliveryPolicy } from "@platter/testing";
import { RECORD } from "../src/webhooks/attempt-record.ts";
import { claimStatement, NEXT_DUE } from "../src/webhooks/delivery-claim.ts";
import { listenerClaim } from "../src/webhooks/local-listeners.ts";
import { CLAIM_NOTICES, RECORD_NOTICES } from "../src/webhooks/operator-notices.ts";
import { ALERT_FAN_OUT, CLAIM_ALERT_MAILS, SETTLE_ALERT_MAIL } from "../src/webhooks/alert-mails.ts";

/**
 * The large statements as PostgreSQL runs them, assembled from their documented fragments (`WALK`,
 * `PENDING`, `DUE`, the lease's) and with `?` numbered as `Database.rows` numbers them: each one is
 * kept in `__snapshots__/statements/<name>.sql`, so the text that runs exists in the repository
 * (a change to a statement shows there in review; `npx vitest run test/statement-texts.test.ts -u`
 * writes it anew). Each is prepared on a real database, so every file is a statement PostgreSQL accepts.
 */

/** `?` placeholders numbered `$1`, `$2`, … as `Database.rows` sends them. */
const numbered = (text: string) => {
  let position = 0;
  return text.replace(/\?/g, () => `$${++position}`);
};

const scope = authenticatedScope({ organizationId: 1, access: "read_write", currency: "EUR", apiKeyId: 1 });
const listener = { id: 1, secret: "", stream: "00000000-0000-0000-0000-000000000000", created: false, tookOver: false };

const STATEMENTS: ReadonlyArray<readonly [name: string, text: string]> = [
  ["delivery-claim", claimStatement(10, 60_000, testDeliveryPolicy, nothingHeld).text],
  ["delivery-next-due", NEXT_DUE],
  ["attempt-record", RECORD],
  ["operator-notice-claim", CLAIM_NOTICES],
  ["operator-notice-record", RECORD_NOTICES],
  ["alert-mail-fan-out", ALERT_FAN_OUT],
  ["alert-mail-claim", CLAIM_ALERT_MAILS],
  ["alert-mail-settle", SETTLE_ALERT_MAIL],
  ["listener-claim", updateStatement(scope, listenerClaim(scope, listener, 60_000)).text],
];

let db: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  client = await db.rawClient();
});
afterAll(() => db?.dispose());

describe("statement texts", () => {
  it.each(STATEMENTS)("%s: its full text is the file under __snapshots__/statements, and PostgreSQL prepares it", async (name, text) => {
    const runs = `${numbered(text)}\n`;
    await expect(runs).toMatchFileSnapshot(`__snapshots__/statements/${name}.sql`);
    await client.query(`prepare ${name.replaceAll("-", "_")} as ${runs}`);
    await client.query(`deallocate ${name.replaceAll("-", "_")}`);
  });

  it("no statement's text leaves a fragment's one-letter CTE behind", () => {
    for (const [, text] of STATEMENTS) expect(text).not.toMatch(/(?:with(?: recursive)?|,)\s+[a-z]\s+as\s+(?:materialized\s+)?\(/i);
  });
});
