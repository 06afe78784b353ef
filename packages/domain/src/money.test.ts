import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  currencyExponent,
  formatMinorUnits,
  fromMinorUnits,
  invoiceTotals,
  isCurrencyCode,
  type LineItemAmounts,
  lineNetMinor,
  lineTaxMinor,
  MAX_MINOR_UNITS,
  toMinorUnits,
} from "./money.ts";

// --- independent reference arithmetic (BigInt, a different rounding algorithm) -----------------

/** Rounds numerator/denominator half away from zero using quotient and remainder. */
const refRoundDiv = (numerator: bigint, denominator: bigint): bigint => {
  const quotient = numerator / denominator; // truncates toward zero
  const remainder = numerator % denominator; // same sign as numerator
  const absRemainder = remainder < 0n ? -remainder : remainder;
  if (absRemainder * 2n < denominator) return quotient;
  return numerator < 0n ? quotient - 1n : quotient + 1n;
};

const refNet = (line: LineItemAmounts): bigint =>
  refRoundDiv(BigInt(line.quantityMilli) * BigInt(line.unitPriceMinor), 1000n);

const refTax = (line: LineItemAmounts): bigint => refRoundDiv(refNet(line) * BigInt(line.taxRateBasisPoints), 10_000n);

/** Parses a decimal text into minor units for `exponent` decimals, or undefined when too precise. */
const refMinorFromText = (text: string, exponent: number): bigint | undefined => {
  const [whole = "0", fraction = ""] = text.split(".");
  if (fraction.length > exponent) return undefined;
  return BigInt(whole + fraction.padEnd(exponent, "0"));
};

const CURRENCIES_BY_EXPONENT = {
  0: ["JPY", "KRW", "CLP", "ISK", "VND"],
  2: ["EUR", "USD", "GBP", "CHF", "SEK"],
  3: ["KWD", "BHD", "JOD", "OMR", "TND"],
  4: ["CLF"],
} as const;
const currencyArb = fc.constantFrom(...Object.values(CURRENCIES_BY_EXPONENT).flat());

// --- tests -------------------------------------------------------------------------------------

describe("isCurrencyCode", () => {
  it.each(["EUR", "USD", "GBP", "JPY", "KWD", "CHF", "SEK", "BHD"])("accepts %s", (code) => {
    expect(isCurrencyCode(code)).toBe(true);
  });

  it.each(["eur", "Eur", "EU", "EURO", "", " EUR", "EUR ", "E R", "XYZ", "ABC", "123", "€", "EUR\u0000", "ＥＵＲ"])(
    "rejects %j",
    (code) => {
      expect(isCurrencyCode(code)).toBe(false);
    },
  );

  it("rejects anything that is not three upper-case ASCII letters (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary" }).filter((s) => !/^[A-Z]{3}$/.test(s)),
        (code) => {
          expect(isCurrencyCode(code)).toBe(false);
        },
      ),
    );
  });

  it("agrees with the runtime's list of ISO 4217 currencies", () => {
    const codes = Intl.supportedValuesOf("currency");
    expect(codes.length).toBeGreaterThan(100);
    for (const code of codes) expect(isCurrencyCode(code)).toBe(true);
  });
});

describe("currencyExponent", () => {
  it.each([
    ["EUR", 2],
    ["USD", 2],
    ["JPY", 0],
    ["KRW", 0],
    ["CLP", 0],
    ["KWD", 3],
    ["BHD", 3],
    ["TND", 3],
    ["CLF", 4],
    ["UYW", 4],
  ])("%s has %i decimals", (currency, exponent) => {
    expect(currencyExponent(currency)).toBe(exponent);
  });
});

describe("toMinorUnits", () => {
  it.each<[number, string, number | undefined]>([
    [12.5, "EUR", 1250],
    [12.5, "USD", 1250],
    [0, "EUR", 0],
    [1, "EUR", 100],
    [0.01, "EUR", 1],
    [0.1, "EUR", 10],
    [0.2, "EUR", 20],
    [0.3, "EUR", 30],
    [0.7, "EUR", 70],
    // Classic float traps: naive Math.round(x * 100) or x * 100 gets these wrong.
    [1.15, "EUR", 115],
    [4.35, "EUR", 435],
    [8.2, "EUR", 820],
    [19.99, "EUR", 1999],
    [1005.5, "EUR", 100550],
    [0.29, "EUR", 29],
    [0.57, "EUR", 57],
    [9.95, "EUR", 995],
    [1234567.89, "EUR", 123456789],
    // The float sum 0.1 + 0.2 is 0.30000000000000004: more precise than a cent, refused.
    [0.1 + 0.2, "EUR", undefined],
    [0.001, "EUR", undefined],
    [1.005, "EUR", undefined],
    [12.345, "EUR", undefined],
    [5, "JPY", 5],
    [5.5, "JPY", undefined],
    [0.1, "JPY", undefined],
    [1000000, "JPY", 1000000],
    [3, "KWD", 3000],
    [1.234, "KWD", 1234],
    [0.001, "KWD", 1],
    [1.2345, "KWD", undefined],
    [1.5, "KWD", 1500],
    [0.0001, "CLF", 1],
    [0.00001, "CLF", undefined],
    [-1, "EUR", undefined],
    [-0.01, "EUR", undefined],
    [-12.5, "EUR", undefined],
    [-5, "JPY", undefined],
    [Number.NaN, "EUR", undefined],
    [Number.POSITIVE_INFINITY, "EUR", undefined],
    [Number.NEGATIVE_INFINITY, "EUR", undefined],
    [1e-7, "EUR", undefined],
    [5e-324, "EUR", undefined],
    [1e21, "EUR", undefined],
    [Number.MAX_VALUE, "EUR", undefined],
  ])("%d %s -> %s", (amount, currency, expected) => {
    expect(toMinorUnits(amount, currency)).toBe(expected);
  });

  it("accepts amounts up to MAX_MINOR_UNITS and refuses larger ones", () => {
    expect(MAX_MINOR_UNITS).toBe(1_000_000_000_000);
    expect(toMinorUnits(10_000_000_000, "EUR")).toBe(MAX_MINOR_UNITS);
    expect(toMinorUnits(9_999_999_999.99, "EUR")).toBe(MAX_MINOR_UNITS - 1);
    expect(toMinorUnits(10_000_000_000.01, "EUR")).toBeUndefined();
    expect(toMinorUnits(MAX_MINOR_UNITS, "JPY")).toBe(MAX_MINOR_UNITS);
    expect(toMinorUnits(MAX_MINOR_UNITS + 1, "JPY")).toBeUndefined();
    expect(toMinorUnits(1_000_000_000, "KWD")).toBe(MAX_MINOR_UNITS);
    expect(toMinorUnits(1_000_000_000.001, "KWD")).toBeUndefined();
  });

  it("refuses every negative amount (property)", () => {
    fc.assert(
      fc.property(fc.double({ max: -Number.MIN_VALUE, noNaN: true }), currencyArb, (amount, currency) => {
        expect(toMinorUnits(amount, currency)).toBeUndefined();
      }),
    );
  });

  it("returns a safe non-negative integer within the cap, or undefined (property)", () => {
    const amountArb = fc.oneof(
      fc.double(), // almost all refused: negative, not finite, too precise or too large
      fc.integer({ min: 0, max: 100_000_000 }), // whole amounts within the cap in every currency: accepted
      fc.integer({ min: 0, max: 10_000_000_000 }).map((n) => n / 100), // hundredths: accepted unless the currency has no decimals
      fc.integer({ min: MAX_MINOR_UNITS + 1, max: Number.MAX_SAFE_INTEGER }), // above the cap in every currency: refused
    );
    const outcomes = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(amountArb, currencyArb, (amount, currency) => {
        const minor = toMinorUnits(amount, currency);
        outcomes[minor === undefined ? "refused" : "accepted"]++;
        // A refusal (undefined) is allowed; anything else must be a safe integer in [0, MAX_MINOR_UNITS].
        const checked = minor === undefined ? 0 : minor;
        expect(Number.isSafeInteger(checked)).toBe(true);
        expect(checked).toBeGreaterThanOrEqual(0);
        expect(checked).toBeLessThanOrEqual(MAX_MINOR_UNITS);
      }),
      { numRuns: 1000 },
    );
    expect(outcomes.accepted).toBeGreaterThan(100);
    expect(outcomes.refused).toBeGreaterThan(100);
  });

  it("converts decimal amounts exactly, matching a BigInt reference (property)", () => {
    fc.assert(
      fc.property(
        currencyArb,
        fc.bigInt({ min: 0n, max: 10_000_000_000n }),
        fc.stringMatching(/^\d{0,5}$/),
        (currency, whole, fraction) => {
          const exponent = currencyExponent(currency);
          const text = fraction === "" ? whole.toString() : `${whole}.${fraction}`;
          // Stay within the 15 significant digits a double always round-trips.
          fc.pre(text.replace(".", "").replace(/^0+/, "").length <= 15);
          const amount = Number(text);
          const reference = refMinorFromText(String(amount), exponent);
          const expected = reference === undefined || reference > BigInt(MAX_MINOR_UNITS) ? undefined : Number(reference);
          expect(toMinorUnits(amount, currency)).toBe(expected);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("converts an amount written with at most the currency's decimals exactly, trailing zeros or not (property)", () => {
    // Generated so that the written fraction never has more digits than the currency's exponent and the
    // whole part stays within the cap: every case is one where the amount text alone gives the answer.
    const writtenArb = currencyArb.chain((currency) => {
      const exponent = currencyExponent(currency);
      return fc.record({
        currency: fc.constant(currency),
        whole: fc.bigInt({ min: 0n, max: BigInt(MAX_MINOR_UNITS) / 10n ** BigInt(exponent) }),
        digits: fc.string({ unit: fc.constantFrom(..."0123456789".split("")), maxLength: exponent }),
        zeros: fc.nat({ max: exponent }),
      });
    });
    let withTrailingZero = 0;
    fc.assert(
      fc.property(writtenArb, ({ currency, whole, digits, zeros }) => {
        const exponent = currencyExponent(currency);
        const fraction = (digits + "0".repeat(zeros)).slice(0, exponent);
        const text = fraction === "" ? whole.toString() : `${whole}.${fraction}`;
        const exact = refMinorFromText(text, exponent);
        expect(exact).toBeDefined();
        if (fraction.endsWith("0")) withTrailingZero++;
        // Trailing zeros in the written amount never matter.
        expect(toMinorUnits(Number(text), currency)).toBe(exact! <= BigInt(MAX_MINOR_UNITS) ? Number(exact) : undefined);
      }),
      { numRuns: 1000 },
    );
    expect(withTrailingZero).toBeGreaterThan(100);
  });
});

describe("formatMinorUnits", () => {
  it.each<[number, string, string]>([
    [1250, "EUR", "12.50"],
    [-1250, "EUR", "-12.50"],
    [5, "EUR", "0.05"],
    [-5, "EUR", "-0.05"],
    [0, "EUR", "0.00"],
    [100, "EUR", "1.00"],
    [123456789, "EUR", "1234567.89"],
    [5, "JPY", "5"],
    [-5, "JPY", "-5"],
    [0, "JPY", "0"],
    [1234, "KWD", "1.234"],
    [1, "KWD", "0.001"],
    [-5, "KWD", "-0.005"],
    [1, "CLF", "0.0001"],
    [MAX_MINOR_UNITS, "EUR", "10000000000.00"],
  ])("%i %s -> %s", (minor, currency, expected) => {
    expect(formatMinorUnits(minor, currency)).toBe(expected);
  });

  it("writes exactly the currency's decimals and the same value (property)", () => {
    fc.assert(
      fc.property(
        // Zero (and negative zero) drawn on purpose: zero has no sign.
        fc.oneof(
          { arbitrary: fc.constantFrom(0, -0), weight: 1 },
          { arbitrary: fc.integer({ min: -MAX_MINOR_UNITS, max: MAX_MINOR_UNITS }), weight: 9 },
        ),
        currencyArb,
        (minor, currency) => {
          const exponent = currencyExponent(currency);
          const text = formatMinorUnits(minor, currency);
          const shape = exponent === 0 ? /^-?(0|[1-9]\d*)$/ : new RegExp(`^-?(0|[1-9]\\d*)\\.\\d{${exponent}}$`);
          expect(text).toMatch(shape);
          expect(BigInt(text.replace(".", ""))).toBe(BigInt(minor));
          // A minus sign exactly for negative amounts: never for zero.
          expect(text.startsWith("-")).toBe(minor < 0);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("fromMinorUnits", () => {
  it.each<[number, string, number]>([
    [1250, "EUR", 12.5],
    [-1250, "EUR", -12.5],
    [1, "EUR", 0.01],
    [0, "EUR", 0],
    [5, "JPY", 5],
    [1234, "KWD", 1.234],
    [1, "CLF", 0.0001],
  ])("%i %s -> %d", (minor, currency, expected) => {
    expect(fromMinorUnits(minor, currency)).toBe(expected);
  });

  it("agrees with the formatted text (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: -MAX_MINOR_UNITS, max: MAX_MINOR_UNITS }), currencyArb, (minor, currency) => {
        expect(fromMinorUnits(minor, currency)).toBe(Number(formatMinorUnits(minor, currency)));
      }),
      { numRuns: 20_000 },
    );
    for (const currency of ["EUR", "JPY", "KWD", "CLF"]) {
      for (let minor = -20_000; minor <= 20_000; minor++) expect(fromMinorUnits(minor, currency)).toBe(Number(formatMinorUnits(minor, currency)));
    }
  });

  it("round-trips through toMinorUnits for every amount in range (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_MINOR_UNITS }), currencyArb, (minor, currency) => {
        expect(toMinorUnits(fromMinorUnits(minor, currency), currency)).toBe(minor);
      }),
      { numRuns: 2000 },
    );
  });

  it("round-trips small amounts exhaustively for every exponent", () => {
    for (const currency of ["EUR", "JPY", "KWD", "CLF"]) {
      for (let minor = 0; minor <= 20_000; minor++) {
        expect(toMinorUnits(fromMinorUnits(minor, currency), currency)).toBe(minor);
      }
    }
  });

  it("round-trips toMinorUnits results back to the same number (property)", () => {
    let roundTripped = 0;
    fc.assert(
      fc.property(
        // Arbitrary doubles are mostly refused (too many decimals); amounts in hundredths are mostly accepted.
        fc.oneof(fc.double({ min: 0, max: 1e10, noNaN: true }), fc.integer({ min: 0, max: 1e9 }).map((n) => n / 100)),
        currencyArb,
        (amount, currency) => {
          const minor = toMinorUnits(amount, currency);
          expect(minor === undefined || fromMinorUnits(minor, currency) === amount).toBe(true);
          if (minor !== undefined) roundTripped++;
        },
      ),
      { numRuns: 500 },
    );
    expect(roundTripped).toBeGreaterThan(50);
  });
});

describe("lineNetMinor", () => {
  const line = (quantityMilli: number, unitPriceMinor: number, taxRateBasisPoints = 0): LineItemAmounts => ({
    quantityMilli,
    unitPriceMinor,
    taxRateBasisPoints,
  });

  it.each<[string, LineItemAmounts, number]>([
    ["one unit", line(1000, 1250), 1250],
    ["three units", line(3000, 999), 2997],
    ["zero quantity", line(0, 1250), 0],
    ["zero price", line(2500, 0), 0],
    ["half a cent rounds up", line(500, 1), 1],
    ["one and a half cents rounds up", line(1500, 1), 2],
    ["two and a half cents rounds up (not to even)", line(2500, 1), 3],
    ["just below half rounds down", line(499, 1), 0],
    ["just above half rounds up", line(501, 1), 1],
    ["0.999 rounds up", line(333, 3), 1],
    ["7006.652 rounds up", line(1234, 5678), 7007],
    ["fractional quantity", line(1500, 1999), 2999], // 2998.5 -> 2999
    ["negative half rounds away from zero", line(-500, 1), -1],
    ["negative price half rounds away from zero", line(500, -1), -1],
    ["negative one and a half rounds away from zero", line(-1500, 1), -2],
    ["negative two and a half rounds away from zero", line(-2500, 1), -3],
    ["negative just below half rounds toward zero", line(-499, 1), 0],
    ["both negative", line(-1500, -1), 2],
    ["large exact", line(1_000_000, 1_000_000_000), 1_000_000_000_000],
  ])("%s", (_label, input, expected) => {
    expect(lineNetMinor(input)).toBe(expected);
  });

  it("matches the BigInt reference (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -10_000_000, max: 10_000_000 }),
        fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }),
        (quantityMilli, unitPriceMinor) => {
          const input = line(quantityMilli, unitPriceMinor);
          expect(lineNetMinor(input)).toBe(Number(refNet(input)));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("is symmetric around zero (rounding half away from zero) (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 1_000_000 }), (q, p) => {
        // `+ 0` normalises -0: zero has no sign here.
        expect(lineNetMinor(line(-q, p)) + 0).toBe(-lineNetMinor(line(q, p)) + 0);
      }),
    );
  });

  it("never differs from the exact product by more than half a minor unit (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.integer({ min: -1_000_000, max: 1_000_000 }), (q, p) => {
        const exactTimes1000 = BigInt(q) * BigInt(p);
        const diff = BigInt(lineNetMinor(line(q, p))) * 1000n - exactTimes1000;
        expect(diff <= 500n && diff >= -500n).toBe(true);
      }),
    );
  });
});

describe("lineTaxMinor", () => {
  const line = (quantityMilli: number, unitPriceMinor: number, taxRateBasisPoints: number): LineItemAmounts => ({
    quantityMilli,
    unitPriceMinor,
    taxRateBasisPoints,
  });

  it.each<[string, LineItemAmounts, number]>([
    ["20 % of 12.50", line(1000, 1250, 2000), 250],
    ["no tax", line(1000, 1250, 0), 0],
    ["10 % of 0.05 = 0.005 rounds up", line(1000, 5, 1000), 1],
    ["10 % of 0.04 = 0.004 rounds down", line(1000, 4, 1000), 0],
    ["50 % of 0.01 = 0.005 rounds up", line(1000, 1, 5000), 1],
    ["50 % of 0.03 = 0.015 rounds up", line(1000, 3, 5000), 2],
    ["50 % of 0.05 = 0.025 rounds up (not to even)", line(1000, 5, 5000), 3],
    ["7.7 % of 19.99", line(1000, 1999, 770), 154], // 153.923 -> 154
    ["19 % of 2.995 (net already rounded to 3.00)", line(500, 599, 1900), 57], // net 300 (299.5 -> 300)
    ["negative net half rounds away from zero", line(1000, -5, 1000), -1],
    ["negative net 2.5 rounds away from zero", line(1000, -5, 5000), -3],
    ["100 %", line(1000, 1234, 10_000), 1234],
  ])("%s", (_label, input, expected) => {
    expect(lineTaxMinor(input)).toBe(expected);
  });

  it("is computed from the rounded net amount, matching the BigInt reference (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -10_000_000, max: 10_000_000 }),
        fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (quantityMilli, unitPriceMinor, taxRateBasisPoints) => {
          const input = line(quantityMilli, unitPriceMinor, taxRateBasisPoints);
          expect(lineTaxMinor(input)).toBe(Number(refTax(input)));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("invoiceTotals", () => {
  const lineArb: fc.Arbitrary<LineItemAmounts> = fc.record({
    quantityMilli: fc.integer({ min: -10_000_000, max: 10_000_000 }),
    unitPriceMinor: fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }),
    taxRateBasisPoints: fc.integer({ min: 0, max: 10_000 }),
  });

  it("totals a simple invoice", () => {
    const lines: LineItemAmounts[] = [
      { quantityMilli: 2000, unitPriceMinor: 1250, taxRateBasisPoints: 2000 }, // 25.00 + 5.00
      { quantityMilli: 1500, unitPriceMinor: 999, taxRateBasisPoints: 700 }, // 14.985 -> 14.99; 1.0493 -> 1.05
    ];
    expect(invoiceTotals(lines, 1000)).toEqual({
      subtotal: 3999,
      tax: 605,
      total: 4604,
      amountPaid: 1000,
      balanceDue: 3604,
    });
  });

  it("rounds tax per line, not on the subtotal", () => {
    // Three lines of 0.05 at 10 %: each tax 0.005 -> 0.01, so 0.03 (on the subtotal it would be 0.015 -> 0.02).
    const lines = Array.from({ length: 3 }, () => ({ quantityMilli: 1000, unitPriceMinor: 5, taxRateBasisPoints: 1000 }));
    expect(invoiceTotals(lines, 0)).toMatchObject({ subtotal: 15, tax: 3, total: 18 });
  });

  it("of no lines is zero, and the balance is minus what was paid", () => {
    expect(invoiceTotals([], 0)).toEqual({ subtotal: 0, tax: 0, total: 0, amountPaid: 0, balanceDue: 0 });
    expect(invoiceTotals([], 500)).toEqual({ subtotal: 0, tax: 0, total: 0, amountPaid: 500, balanceDue: -500 });
  });

  it("fully paid invoices have a zero balance", () => {
    const lines = [{ quantityMilli: 1000, unitPriceMinor: 12345, taxRateBasisPoints: 1900 }];
    const { total } = invoiceTotals(lines, 0);
    expect(invoiceTotals(lines, total).balanceDue).toBe(0);
  });

  it("equals an independent BigInt computation (property)", () => {
    fc.assert(
      fc.property(
        fc.array(lineArb, { maxLength: 25 }),
        fc.integer({ min: 0, max: MAX_MINOR_UNITS }),
        (lines, amountPaid) => {
          let subtotal = 0n;
          let tax = 0n;
          for (const l of lines) {
            subtotal += refNet(l);
            tax += refTax(l);
          }
          const total = subtotal + tax;
          const result = invoiceTotals(lines, amountPaid);
          expect(result).toEqual({
            subtotal: Number(subtotal),
            tax: Number(tax),
            total: Number(total),
            amountPaid,
            balanceDue: Number(total - BigInt(amountPaid)),
          });
          for (const value of Object.values(result)) expect(Number.isSafeInteger(value)).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("balance_due = total - amount_paid and total = subtotal + tax (property)", () => {
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 10 }), fc.integer({ min: 0, max: MAX_MINOR_UNITS }), (lines, paid) => {
        const t = invoiceTotals(lines, paid);
        expect(t.total).toBe(t.subtotal + t.tax);
        expect(t.balanceDue).toBe(t.total - paid);
        expect(t.amountPaid).toBe(paid);
      }),
    );
  });

  it("does not depend on the order of the lines (property)", () => {
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 10 }), fc.integer({ min: 0, max: 1_000_000 }), (lines, paid) => {
        expect(invoiceTotals([...lines].reverse(), paid)).toEqual(invoiceTotals(lines, paid));
      }),
    );
  });
});
