/**
 * Storable text: every text derived from input (a field name or value echoed in an error text, a
 * receiver's answer, a local listener's report) is made bounded, NUL-free and well-formed before it
 * is answered, kept in memory or written. PostgreSQL's `text` refuses NUL (and one refused row used to
 * sink a whole batch of other organizations' rows), a lone surrogate has no UTF-8 form, and an
 * unbounded echo lets one request store megabytes.
 */

/** Longest piece of input echoed inside an error text (a field name, an unknown value), in characters. */
export const ECHOED_INPUT_MAX_CHARACTERS = 100;

/** Longest error text answered or stored (the API's `{"error": …}`, the request log, form errors), in characters. */
export const ERROR_TEXT_MAX_CHARACTERS = 500;

/**
 * Longest error text or receiver answer kept with a delivery attempt, in characters (a dispatcher
 * reads at most the first 1,024 bytes of a receiver's body; a local listener's report is cut here).
 */
export const ATTEMPT_TEXT_MAX_CHARACTERS = 1024;

/** What ends a text that was cut: one character, counted in the bound. */
export const CUT_MARKER = "…";

/** What stands for a NUL or a lone surrogate: the Unicode replacement character. */
const REPLACEMENT = "\uFFFD";

/**
 * `text` as it may be answered and stored: at most `maxCharacters` characters (Unicode code points;
 * a longer text keeps its first `maxCharacters - 1` and ends with `…`), every NUL and every lone
 * surrogate replaced by U+FFFD, and no surrogate pair ever split. A text that is already so is
 * returned as it is (the common case costs a length check and two scans); the work on a longer one
 * is bounded by `maxCharacters`, however long the input. `maxCharacters` is at least 1.
 */
export const storableText = (text: string, maxCharacters: number): string => {
  if (text.length <= maxCharacters && !text.includes("\u0000") && text.isWellFormed()) return text;
  const kept: string[] = [];
  // The string iterator yields code points (a lone surrogate alone), lazily: at most one past the bound is read.
  for (const point of text) {
    if (kept.length > maxCharacters) break;
    kept.push(point);
  }
  if (kept.length > maxCharacters) {
    kept.length = Math.max(maxCharacters - 1, 0);
    kept.push(CUT_MARKER);
  }
  return kept.join("").toWellFormed().replaceAll("\u0000", REPLACEMENT);
};

/** `storableText` for a text that may be absent (null or undefined stays null). */
export const storableTextOrNull = (text: string | null | undefined, maxCharacters: number): string | null =>
  text === null || text === undefined ? null : storableText(text, maxCharacters);
