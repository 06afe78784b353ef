import escapeHtml from "escape-html";

/**
 * HTML that escapes by default: every value interpolated into an `html` template is escaped
 * (escape-html: `& < > " '`) unless it is itself `Html` made by this tag, so a name such as
 * `<script>` renders as characters. There is no way to mark other text as safe.
 */

/** Markup made by the `html` tag (its values escaped). */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

/** What a template may interpolate: text and numbers are escaped; nothing, false and null render as nothing. */
export type HtmlValue = Html | string | number | boolean | null | undefined | ReadonlyArray<HtmlValue>;

const render = (value: HtmlValue): string => {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false || value === true) return "";
  return escapeHtml(String(value));
};

/** `html\`<td>${name}</td>\``: markup with every interpolated value escaped. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<HtmlValue>): Html => {
  let text = strings[0]!;
  values.forEach((value, index) => {
    text += render(value) + strings[index + 1]!;
  });
  return new Html(text);
};
