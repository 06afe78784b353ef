/**
 * A Developer-area session's device hint: a few words naming the browser and system a session was
 * opened from ("Chrome on Linux"), derived from the User-Agent at sign-in so that a developer can
 * tell their sessions apart. Only the hint is stored, never the header. Common browsers and systems
 * only; anything else is "Unknown browser" / "unknown system".
 */

/** Longest User-Agent read (a longer one is cut first): the patterns below never need more. */
const MAX_USER_AGENT = 512;

/** Browsers, most specific first: Edge, Opera and Samsung Internet say "Chrome" too, and Chrome says "Safari". */
const BROWSERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, "Edge"],
  [/\bOPR\/|\bOpera\b/, "Opera"],
  [/\bSamsungBrowser\//, "Samsung Internet"],
  [/\bVivaldi\//, "Vivaldi"],
  [/\bFirefox\/|\bFxiOS\//, "Firefox"],
  [/\bHeadlessChrome\//, "Headless Chrome"],
  [/\bChrom(?:e|ium)\/|\bCriOS\//, "Chrome"],
  [/\bVersion\/[\d.]+.*\bSafari\/|\b(?:iPhone|iPad).*AppleWebKit\//, "Safari"],
  [/\bcurl\//, "curl"],
];

/** Systems, most specific first: Android says "Linux", iOS says "like Mac OS X". */
const SYSTEMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(?:iPhone|iPad|iPod)\b/, "iOS"],
  [/\bAndroid\b/, "Android"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bWindows\b/, "Windows"],
  [/\bMacintosh\b|\bMac OS X\b/, "macOS"],
  [/\bLinux\b|\bX11\b/, "Linux"],
];

const first = (userAgent: string, table: ReadonlyArray<readonly [RegExp, string]>) =>
  table.find(([pattern]) => pattern.test(userAgent))?.[1];

/** The hint of a User-Agent header (`Chrome on Linux`, `Safari on iOS`, `Firefox`, `Unknown browser`). */
export const deviceHint = (userAgent: string | undefined): string => {
  const text = (userAgent ?? "").slice(0, MAX_USER_AGENT);
  const browser = first(text, BROWSERS);
  const system = first(text, SYSTEMS);
  if (browser === undefined) return system === undefined ? "Unknown browser" : `Unknown browser on ${system}`;
  return system === undefined ? browser : `${browser} on ${system}`;
};
