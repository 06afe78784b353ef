import { ALLERGENS, COURSES, EVENT_STATUSES, invoiceTotals, UNITS } from "@platter/domain";
import { createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliJson } from "./cli-process.ts";

/** `platter seed demo|bulk` as real processes; what they wrote is checked in SQL. */

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  env = { DATABASE_URL: db.url };
});
afterAll(() => db?.dispose());

const rows = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);

const countsOf = async (organizationId: number) => {
  const [counts] = await rows<Record<string, number>>(
    `select (select count(*)::int from recipes where organization_id = ?) as recipes,
            (select count(*)::int from ingredients where organization_id = ?) as ingredients,
            (select count(*)::int from clients where organization_id = ?) as clients,
            (select count(*)::int from events where organization_id = ?) as events,
            (select count(*)::int from dishes where organization_id = ?) as dishes,
            (select count(*)::int from proposals where organization_id = ?) as proposals,
            (select count(*)::int from invoices where organization_id = ?) as invoices,
            (select count(*)::int from invoice_line_items where organization_id = ?) as line_items`,
    Array(8).fill(organizationId),
  );
  return counts!;
};

const newOrganization = async (currency = "EUR"): Promise<number> =>
  (await runCliJson(["org", "create", "--name", `Seed Test ${currency}`, "--currency", currency], env)).id;

describe("platter seed demo", () => {
  it("seeds a realistic data set and reports its counts", async () => {
    const org = await newOrganization();
    const reported = await runCliJson(["seed", "demo", "--org", String(org)], env);
    const stored = await countsOf(org);
    expect(reported).toEqual({ recipes: stored.recipes, clients: stored.clients, events: stored.events, invoices: stored.invoices });
    expect(stored.recipes).toBeGreaterThanOrEqual(20);
    expect(stored.clients).toBeGreaterThanOrEqual(10);
    expect(stored.events).toBeGreaterThanOrEqual(15);
    expect(stored.invoices).toBeGreaterThanOrEqual(10);
    expect(stored.ingredients).toBeGreaterThanOrEqual(3 * stored.recipes!);
    expect(stored.dishes).toBeGreaterThanOrEqual(3 * stored.events!);
    expect(stored.proposals).toBeGreaterThanOrEqual(3);
    expect(stored.line_items).toBeGreaterThanOrEqual(stored.invoices!);
  });

  it("uses only the domain's units, allergens, courses and statuses, with diet flags that match the allergens", async () => {
    const org = await newOrganization();
    await runCliJson(["seed", "demo", "--org", String(org)], env);
    const units = await rows<{ unit: string }>("select distinct unit from ingredients where organization_id = ?", [org]);
    expect(units.map((row) => row.unit).every((unit) => (UNITS as readonly string[]).includes(unit))).toBe(true);
    const courses = await rows<{ course: string }>("select distinct course from dishes where organization_id = ?", [org]);
    expect(courses.map((row) => row.course).sort()).toEqual([...COURSES].sort());
    const statuses = await rows<{ status: string }>("select distinct status from events where organization_id = ?", [org]);
    expect(statuses.map((row) => row.status).sort()).toEqual([...EVENT_STATUSES].sort());

    const recipes = await rows<{ allergens: string[]; vegetarian: boolean; vegan: boolean; gluten_free: boolean; dairy_free: boolean }>(
      "select allergens, vegetarian, vegan, gluten_free, dairy_free from recipes where organization_id = ?", [org],
    );
    for (const recipe of recipes) {
      expect(recipe.allergens.every((allergen) => (ALLERGENS as readonly string[]).includes(allergen))).toBe(true);
      expect(recipe.gluten_free).toBe(!recipe.allergens.includes("gluten"));
      expect(recipe.dairy_free).toBe(!recipe.allergens.includes("milk"));
      if (recipe.vegan) expect(recipe.vegetarian && recipe.dairy_free && !recipe.allergens.includes("eggs")).toBe(true);
      if (["fish", "crustaceans", "molluscs"].some((allergen) => recipe.allergens.includes(allergen))) {
        expect(recipe.vegetarian).toBe(false);
      }
    }
    const flags = (flag: string) => recipes.filter((recipe) => (recipe as Record<string, unknown>)[flag] === true).length;
    for (const flag of ["vegetarian", "vegan", "gluten_free", "dairy_free"]) expect(flags(flag)).toBeGreaterThan(0);
  });

  it("writes invoices in every status whose stored payments agree with their computed totals", async () => {
    const org = await newOrganization("JPY");
    await runCliJson(["seed", "demo", "--org", String(org)], env);
    const invoices = await rows<{ status: string; currency: string; amount_paid_minor: string; lines: any[] }>(
      `select i.status, i.currency, i.amount_paid_minor,
         (select json_agg(l order by l.position) from invoice_line_items l where l.invoice_id = i.id) as lines
       from invoices i where i.organization_id = ?`, [org],
    );
    expect(new Set(invoices.map((invoice) => invoice.status))).toEqual(new Set(["draft", "sent", "paid", "void"]));
    for (const invoice of invoices) {
      expect(invoice.currency).toBe("JPY");
      const lines = invoice.lines.map((line) => ({
        quantityMilli: Number(line.quantity_milli),
        unitPriceMinor: Number(line.unit_price_minor),
        taxRateBasisPoints: line.tax_rate_basis_points,
      }));
      for (const line of lines) {
        expect(Number.isInteger(line.quantityMilli) && Number.isInteger(line.unitPriceMinor)).toBe(true);
      }
      const { total } = invoiceTotals(lines, 0);
      const paid = Number(invoice.amount_paid_minor);
      expect(total).toBeGreaterThan(0);
      if (invoice.status === "paid") expect(paid).toBe(total);
      if (invoice.status === "draft" || invoice.status === "void") expect(paid).toBe(0);
      if (invoice.status === "sent") expect(paid).toBeLessThan(total);
    }
  });

  it("can seed the same organization twice (invoice numbers stay unique)", async () => {
    const org = await newOrganization();
    await runCliJson(["seed", "demo", "--org", String(org)], env);
    const second = await runCliJson(["seed", "demo", "--org", String(org)], env);
    expect((await countsOf(org)).invoices).toBe(2 * second.invoices);
  });

  it("fails with exit 1 for an unknown organization and writes nothing", async () => {
    const [before] = await rows<{ n: number }>("select count(*)::int as n from recipes");
    const result = await runCli(["seed", "demo", "--org", "999999", "--json"], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("organization 999999 does not exist");
    const [after] = await rows<{ n: number }>("select count(*)::int as n from recipes");
    expect(after!.n).toBe(before!.n);
  });
});

describe("platter seed bulk", () => {
  it("seeds the requested volumes and reports counts and seconds", async () => {
    const org = await newOrganization();
    const reported = await runCliJson(
      ["seed", "bulk", "--org", String(org), "--events", "300", "--clients", "40", "--invoices", "120"],
      env,
    );
    expect(reported).toEqual({ events: 300, clients: 40, invoices: 120, seconds: expect.any(Number) });
    const stored = await countsOf(org);
    expect(stored).toMatchObject({ events: 300, clients: 40, invoices: 120 });
  });

  it("shows no progress bar when stderr is not a terminal", async () => {
    const org = await newOrganization();
    const result = await runCli(["seed", "bulk", "--org", String(org), "--events", "10", "--clients", "5", "--invoices", "5"], env);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(/\u001b\[|█|░/);
    expect(result.stdout).toMatch(/^seeded organization \d+ with 10 events, 5 clients and 5 invoices in [\d.]+ s\n$/);
  });

  it("refuses a negative count with exit 2", async () => {
    const result = await runCli(["seed", "bulk", "--org", "1", "--events", "-5", "--json"], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("--events must be a non-negative integer");
  });
});
