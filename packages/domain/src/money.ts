/**
 * Money: exact arithmetic in integer minor units (cents, yen, fils). Amounts cross the API as
 * decimal numbers in major units (`12.5` EUR); they are converted at the edge and never summed
 * as floating point.
 */

/** ISO 4217 currencies whose minor unit is not 1/100. */
const EXPONENT_EXCEPTIONS: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0,
  UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3, CLF: 4, UYW: 4,
};

const KNOWN_CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));

/** Largest amount in minor units we accept: keeps every sum well inside exact doubles. */
export const MAX_MINOR_UNITS = 1_000_000_000_000;

/** Whether `code` is an ISO 4217 currency code (upper case). */
export const isCurrencyCode = (code: string): boolean => /^[A-Z]{3}$/.test(code) && KNOWN_CURRENCIES.has(code);

/** Number of decimal places of a currency's minor unit. */
export const currencyExponent = (currency: string): number => EXPONENT_EXCEPTIONS[currency] ?? 2;

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Converts a non-negative major-unit amount into minor units, or `undefined` when it is negative,
 * not finite, too large, or more precise than the currency allows (`0.001` EUR).
 */
export const toMinorUnits = (amount: number, currency: string): number | undefined => {
  const exponent = currencyExponent(currency);
  const match = Number.isFinite(amount) ? DECIMAL.exec(String(amount)) : null;
  if (match === null) return undefined;
  const [, whole = "", fraction = ""] = match;
  if (fraction.length > exponent) return undefined;
  const minor = Number(whole + fraction.padEnd(exponent, "0"));
  return minor <= MAX_MINOR_UNITS ? minor : undefined;
};

const POWERS_OF_TEN: ReadonlyArray<number> = [1, 10, 100, 1_000, 10_000];

/**
 * Converts minor units back to the major-unit number the API shows (`1250` → `12.5`). One IEEE
 * division is correctly rounded, so it is the very number the exact decimal (`formatMinorUnits`)
 * parses to (a property test holds them equal), without building the string.
 */
export const fromMinorUnits = (minor: number, currency: string): number => minor / POWERS_OF_TEN[currencyExponent(currency)]!;

/** Minor units as an exact decimal string (`-1250` → `"-12.50"`). */
export const formatMinorUnits = (minor: number, currency: string): string => {
  const exponent = currencyExponent(currency);
  const digits = Math.abs(minor).toString().padStart(exponent + 1, "0");
  const sign = minor < 0 ? "-" : "";
  if (exponent === 0) return sign + digits;
  return `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
};

/** Integer division rounding half away from zero. */
const divideRounded = (numerator: bigint, denominator: bigint): bigint => {
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  const rounded = (magnitude * 2n + denominator) / (denominator * 2n);
  return negative ? -rounded : rounded;
};

/** One invoice line as stored: quantity in thousandths, price in minor units, tax in basis points. */
export interface LineItemAmounts {
  readonly quantityMilli: number;
  readonly unitPriceMinor: number;
  readonly taxRateBasisPoints: number;
}

/** A line's net amount: quantity × unit price, rounded to the minor unit. */
export const lineNetMinor = (line: LineItemAmounts): number =>
  Number(divideRounded(BigInt(line.quantityMilli) * BigInt(line.unitPriceMinor), 1000n));

/** A line's tax, rounded per line (the usual invoicing convention). */
export const lineTaxMinor = (line: LineItemAmounts): number =>
  Number(divideRounded(BigInt(lineNetMinor(line)) * BigInt(line.taxRateBasisPoints), 10_000n));

/** An invoice's computed totals, all in minor units. */
export interface InvoiceTotalsMinor {
  readonly subtotal: number;
  readonly tax: number;
  readonly total: number;
  readonly amountPaid: number;
  readonly balanceDue: number;
}

/** Sums an invoice's lines exactly and derives what is still owed. */
export const invoiceTotals = (lines: ReadonlyArray<LineItemAmounts>, amountPaidMinor: number): InvoiceTotalsMinor => {
  let subtotal = 0;
  let tax = 0;
  for (const line of lines) {
    subtotal += lineNetMinor(line);
    tax += lineTaxMinor(line);
  }
  const total = subtotal + tax;
  return { subtotal, tax, total, amountPaid: amountPaidMinor, balanceDue: total - amountPaidMinor };
};
