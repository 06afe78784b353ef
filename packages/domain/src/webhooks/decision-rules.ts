/**
 * The delivery decision's rules as data (`delivery-decision.ts` writes them): a rule is a small
 * expression over a decision's named inputs and `now`, and a decision table is rows of conditions →
 * outcomes, the first row whose condition holds deciding. The domain evaluates them here (the
 * in-memory storage calls the functions built on them); the storage translates the same rules to SQL
 * (persistence's `decision-sql.ts`), so a rule is written once, in one place. Values are those SQL
 * has too: text, numbers, booleans and null (a time is milliseconds of the one clock), and null
 * behaves as in SQL (a comparison with null is null, and a condition that is null does not hold).
 */

/** A value a rule yields: text, a number (a time is milliseconds of the storage's clock), a boolean or null. */
export type RuleValue = string | number | boolean | null;

/** One rule: an expression over a decision's inputs and `now`, evaluated by `evaluateRule` and translated to SQL by the storage. */
export type Rule =
  | { readonly op: "input"; readonly name: string }
  | { readonly op: "now" }
  | { readonly op: "value"; readonly value: RuleValue }
  | { readonly op: "not"; readonly of: Rule }
  | { readonly op: "and" | "or"; readonly of: ReadonlyArray<Rule> }
  | { readonly op: "is null"; readonly of: Rule }
  | { readonly op: "=" | "<" | "<=" | ">=" | ">"; readonly left: Rule; readonly right: Rule }
  | { readonly op: "+" | "-"; readonly left: Rule; readonly right: Rule }
  | { readonly op: "later" | "earlier"; readonly time: Rule; readonly ms: Rule }
  | { readonly op: "coalesce"; readonly of: ReadonlyArray<Rule> }
  | { readonly op: "cases"; readonly when: ReadonlyArray<readonly [condition: Rule, then: Rule]>; readonly otherwise: Rule }
  | { readonly op: "match"; readonly of: Rule; readonly when: ReadonlyArray<readonly [value: RuleValue, then: Rule]>; readonly otherwise: Rule };

/** The decision's input `name` (bound by the caller: a field in TypeScript, a column in SQL). */
export const input = (name: string): Rule => ({ op: "input", name });
/** The storage's `now` (the database's `now()`; the test's clock in memory). */
export const NOW: Rule = { op: "now" };
/** A constant. */
export const value = (of: RuleValue): Rule => ({ op: "value", value: of });
/** Not `of`. */
export const not = (of: Rule): Rule => ({ op: "not", of });
/** All of `of`. */
export const and = (...of: ReadonlyArray<Rule>): Rule => ({ op: "and", of });
/** Any of `of`. */
export const or = (...of: ReadonlyArray<Rule>): Rule => ({ op: "or", of });
/** Whether `of` is null. */
export const isNull = (of: Rule): Rule => ({ op: "is null", of });
/** `left op right`, a comparison. */
export const compare = (left: Rule, op: "=" | "<" | "<=" | ">=" | ">", right: Rule): Rule => ({ op, left, right });
/** `left + right` (numbers). */
export const plus = (left: Rule, right: Rule): Rule => ({ op: "+", left, right });
/** `left - right` (numbers). */
export const minus = (left: Rule, right: Rule): Rule => ({ op: "-", left, right });
/** The time `ms` milliseconds after `time`. */
export const later = (time: Rule, ms: Rule): Rule => ({ op: "later", time, ms });
/** The time `ms` milliseconds before `time`. */
export const earlier = (time: Rule, ms: Rule): Rule => ({ op: "earlier", time, ms });
/** The first of `of` that is not null. */
export const coalesce = (...of: ReadonlyArray<Rule>): Rule => ({ op: "coalesce", of });
/** The outcome of the first row whose condition holds, else `otherwise`: a one-column decision table. */
export const cases = (when: ReadonlyArray<readonly [Rule, Rule]>, otherwise: Rule = value(null)): Rule => ({ op: "cases", when, otherwise });
/** The outcome for the value `of` equals, else `otherwise`. */
export const match = (of: Rule, when: ReadonlyArray<readonly [RuleValue, Rule]>, otherwise: Rule = value(null)): Rule =>
  ({ op: "match", of, when, otherwise });

/** A decision table's row: when `when` holds (and no row before it did), the columns are `then`. */
export interface DecisionRow<Column extends string> {
  readonly when: Rule;
  readonly then: Readonly<Record<Column, Rule>>;
}

/** A decision table's columns, each as one rule (a `cases` over the rows): what the storage translates. */
export const tableColumns = <Column extends string>(
  rows: ReadonlyArray<DecisionRow<Column>>, otherwise: Readonly<Record<Column, Rule>>,
): Readonly<Record<Column, Rule>> =>
  Object.fromEntries(Object.keys(otherwise).map((column) => {
    const key = column as Column;
    // Adjacent rows with the same outcome become one condition, so the translated CASE reads as the table does.
    const merged: Array<[Rule, Rule]> = [];
    for (const row of rows) {
      const last = merged.at(-1);
      if (last !== undefined && sameRule(last[1], row.then[key])) last[0] = or(last[0], row.when);
      else merged.push([row.when, row.then[key]]);
    }
    while (merged.length > 0 && sameRule(merged.at(-1)![1], otherwise[key])) merged.pop();
    return [key, merged.length === 0 ? otherwise[key] : cases(merged, otherwise[key])];
  })) as Record<Column, Rule>;

const sameRule = (a: Rule, b: Rule): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The inputs a rule reads, by name. */
export type RuleInputs = Readonly<Record<string, RuleValue | undefined>>;

const truthy = (of: RuleValue): boolean => of === true;

const numeric = (of: RuleValue): number | null => (of === null ? null : Number(of));

/** What `rule` yields for `inputs` at `nowMs`, with SQL's null (an input left undefined is null). */
export const evaluateRule = (rule: Rule, inputs: RuleInputs, nowMs: number): RuleValue => {
  const at = (of: Rule) => evaluateRule(of, inputs, nowMs);
  switch (rule.op) {
    case "input": {
      if (!(rule.name in inputs)) throw new Error(`decision input ${rule.name} not given`);
      return inputs[rule.name] ?? null;
    }
    case "now":
      return nowMs;
    case "value":
      return rule.value;
    case "not": {
      const of = at(rule.of);
      return of === null ? null : !of;
    }
    case "and": {
      const all = rule.of.map(at);
      return all.includes(false) ? false : all.includes(null) ? null : true;
    }
    case "or": {
      const any = rule.of.map(at);
      return any.includes(true) ? true : any.includes(null) ? null : false;
    }
    case "is null":
      return at(rule.of) === null;
    case "=": case "<": case "<=": case ">=": case ">": {
      const left = at(rule.left);
      const right = at(rule.right);
      if (left === null || right === null) return null;
      if (rule.op === "=") return left === right;
      const [l, r] = [Number(left), Number(right)];
      return rule.op === "<" ? l < r : rule.op === "<=" ? l <= r : rule.op === ">=" ? l >= r : l > r;
    }
    case "+": case "-": case "later": case "earlier": {
      const [l, r] = "time" in rule ? [numeric(at(rule.time)), numeric(at(rule.ms))] : [numeric(at(rule.left)), numeric(at(rule.right))];
      if (l === null || r === null) return null;
      return rule.op === "+" || rule.op === "later" ? l + r : l - r;
    }
    case "coalesce": {
      for (const of of rule.of) {
        const result = at(of);
        if (result !== null) return result;
      }
      return null;
    }
    case "cases": {
      for (const [condition, then] of rule.when) if (truthy(at(condition))) return at(then);
      return at(rule.otherwise);
    }
    case "match": {
      const of = at(rule.of);
      for (const [candidate, then] of rule.when) if (of !== null && of === candidate) return at(then);
      return at(rule.otherwise);
    }
  }
};

/**
 * `rule` with the inputs `known` gives fixed (a storage where one is always the same: the operator
 * channel's notices have no endpoint to disable), and what those decide folded away: a condition
 * that is now constant drops its row, or ends the table there.
 */
export const withInputs = (rule: Rule, known: RuleInputs): Rule => {
  const at = (of: Rule) => withInputs(of, known);
  const constant = (of: Rule): RuleValue | undefined => (of.op === "value" ? of.value : undefined);
  switch (rule.op) {
    case "input":
      return rule.name in known ? value(known[rule.name] ?? null) : rule;
    case "not": {
      const of = at(rule.of);
      const fixed = constant(of);
      return typeof fixed === "boolean" ? value(!fixed) : not(of);
    }
    case "and": case "or": {
      const decides = rule.op === "or";
      const parts = rule.of.map(at).filter((of) => constant(of) !== !decides);
      if (parts.some((of) => constant(of) === decides)) return value(decides);
      return parts.length === 0 ? value(!decides) : parts.length === 1 ? parts[0]! : { op: rule.op, of: parts };
    }
    case "cases": {
      const rows: Array<readonly [Rule, Rule]> = [];
      for (const [condition, then] of rule.when) {
        const fixed = at(condition);
        if (constant(fixed) === true) return rows.length === 0 ? at(then) : cases(rows, at(then));
        if (fixed.op !== "value") rows.push([fixed, at(then)]);
      }
      const otherwise = at(rule.otherwise);
      // Rows whose outcome is the table's otherwise decide nothing.
      return rows.every(([, then]) => sameRule(then, otherwise)) ? otherwise : cases(rows, otherwise);
    }
    case "is null":
      return { ...rule, of: at(rule.of) };
    case "=": case "<": case "<=": case ">=": case ">": case "+": case "-":
      return { ...rule, left: at(rule.left), right: at(rule.right) };
    case "later": case "earlier":
      return { ...rule, time: at(rule.time), ms: at(rule.ms) };
    case "coalesce":
      return { ...rule, of: rule.of.map(at) };
    case "match":
      return { ...rule, of: at(rule.of), when: rule.when.map(([candidate, then]) => [candidate, at(then)] as const), otherwise: at(rule.otherwise) };
    case "now": case "value":
      return rule;
  }
};

/** What each of `columns` yields for `inputs` at `nowMs`. */
export const evaluateColumns = <Column extends string>(
  columns: Readonly<Record<Column, Rule>>, inputs: RuleInputs, nowMs: number,
): Record<Column, RuleValue> =>
  Object.fromEntries(Object.entries<Rule>(columns).map(([column, rule]) => [column, evaluateRule(rule, inputs, nowMs)])) as Record<Column, RuleValue>;
