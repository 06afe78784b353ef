import type { Rule, RuleValue } from "@platter/domain";
import { timeMinusSql, timePlusSql } from "../database-clock.ts";

/**
 * The domain's decision rules (`decision-rules.ts`: `DELIVERY_DECISION`, `ENDPOINT_DECISION`) as SQL
 * expressions, so the record statement applies the rules the domain writes instead of a second copy
 * of them: each input is bound to a column or an expression of the statement, `now` is the
 * database's `now()` (the one clock, `database-clock.ts`), a table's rows become one `case`.
 */

/** Each input of a rule, by name, as an SQL expression of the statement. */
export type RuleBindings = Readonly<Record<string, string>>;

/** An SQL literal for `value` (text quoted, `'` doubled). */
const literal = (value: RuleValue): string =>
  value === null ? "null" : typeof value === "string" ? `'${value.replaceAll("'", "''")}'` : String(value);

/** How tightly an SQL form binds (PostgreSQL's precedence): a part binding less tightly than its place needs is parenthesised. */
const OR = 1, AND = 2, NOT = 3, COMPARISON = 4, IS = 5, SUM = 6, ATOM = 9;
/** A `case` binds as an atom, but reads better parenthesised as a comparison's or a sum's operand. */
const CASE = 4.5;

/** An SQL form and how tightly it binds. */
interface Form { readonly text: string; readonly binds: number }

/** `form` in a place that needs at least `needs`. */
const within = (form: Form, needs: number): string => (form.binds >= needs ? form.text : `(${form.text})`);

/** A `case`: one `when` a line when it is the outermost and long (indented to read under the column it sets), otherwise on one line. */
const caseText = (head: string, branches: ReadonlyArray<string>, otherwise: string | undefined, outermost: boolean): string => {
  const parts = [...branches, ...(otherwise === undefined ? [] : [`else ${otherwise}`])];
  const line = `case ${head}${parts.join(" ")} end`;
  return !outermost || parts.length === 1 || line.length <= 110 ? line : `case ${head}${parts.join("\n        ")}\n      end`;
};

const form = (rule: Rule, bindings: RuleBindings, outermost = true): Form => {
  const at = (of: Rule) => form(of, bindings, false);
  const nullOtherwise = (of: Rule) => of.op === "value" && of.value === null;
  switch (rule.op) {
    case "input": {
      const bound = bindings[rule.name];
      if (bound === undefined) throw new Error(`decision input ${rule.name} has no SQL binding`);
      // A column is an atom; an expression (`disabled.id is null`) binds as a comparison.
      return { text: bound, binds: /^[\w.]+$/.test(bound) ? ATOM : IS };
    }
    case "now":
      return { text: "now()", binds: ATOM };
    case "value":
      return { text: literal(rule.value), binds: ATOM };
    case "not":
      // `not (x is null)` reads as `x is not null` (an input bound to `x is null` too).
      if (rule.of.op === "is null") return { text: `${within(at(rule.of.of), IS + 1)} is not null`, binds: IS };
      if (rule.of.op === "input" && / is null$/.test(at(rule.of).text)) return { text: at(rule.of).text.replace(/ is null$/, " is not null"), binds: IS };
      return { text: `not ${within(at(rule.of), COMPARISON)}`, binds: NOT };
    case "and": case "or": {
      const binds = rule.op === "and" ? AND : OR;
      // `a or (b or c)` is `a or b or c`; an `and` within an `or` keeps its parentheses, for the reader.
      const parts = rule.of.flatMap((of) => (of.op === rule.op ? of.of : [of]));
      return { text: parts.map((of) => within(at(of), rule.op === "or" ? AND + 1 : NOT)).join(` ${rule.op} `), binds };
    }
    case "is null":
      return { text: `${within(at(rule.of), IS + 1)} is null`, binds: IS };
    case "=": case "<": case "<=": case ">=": case ">":
      return { text: `${within(at(rule.left), COMPARISON + 1)} ${rule.op} ${within(at(rule.right), COMPARISON + 1)}`, binds: COMPARISON };
    case "+": case "-":
      return { text: `${within(at(rule.left), SUM)} ${rule.op} ${within(at(rule.right), SUM + 1)}`, binds: SUM };
    case "later":
      return { text: timePlusSql(within(at(rule.time), SUM), within(at(rule.ms), ATOM)), binds: ATOM };
    case "earlier":
      return { text: timeMinusSql(within(at(rule.time), SUM), within(at(rule.ms), ATOM)), binds: ATOM };
    case "coalesce":
      return { text: `coalesce(${rule.of.map((of) => at(of).text).join(", ")})`, binds: ATOM };
    case "cases":
      return {
        text: caseText("", rule.when.map(([condition, then]) => `when ${at(condition).text} then ${at(then).text}`),
          nullOtherwise(rule.otherwise) ? undefined : at(rule.otherwise).text, outermost),
        binds: CASE,
      };
    case "match":
      return {
        text: caseText(`${within(at(rule.of), ATOM)} `, rule.when.map(([candidate, then]) => `when ${literal(candidate)} then ${at(then).text}`),
          nullOtherwise(rule.otherwise) ? undefined : at(rule.otherwise).text, outermost),
        binds: CASE,
      };
  }
};

/**
 * The SQL expression of `rule` with its inputs bound by `bindings` (an expression such as
 * `disabled.id is null` is negated as `disabled.id is not null`), parenthesised where PostgreSQL (or a
 * reader) needs it, and as a whole when it binds less tightly than a comparison, so it can stand anywhere.
 */
export const ruleSql = (rule: Rule, bindings: RuleBindings): string => within(form(rule, bindings), COMPARISON);
