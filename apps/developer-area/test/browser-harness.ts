import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import chromium from "@sparticuz/chromium";
import { type Browser, chromium as playwright, type Page } from "playwright-core";

/** What the browser suites share: the real headless Chromium, pages that collect their problems, and where screenshots go. */

/** Screenshots of every page state, for a person to look at (git-ignored). */
export const SCREENSHOTS = fileURLToPath(new URL("../test-output/", import.meta.url));

/** The package's flags for serverless hosts, less those that would switch off the protections under test. */
const UNSAFE_FLAGS = new Set(["--disable-web-security", "--allow-running-insecure-content", "--disable-site-isolation-trials"]);

/** Starts the npm package's headless Chromium (and makes the screenshot folder). */
export const launchBrowser = async (): Promise<Browser> => {
  await mkdir(SCREENSHOTS, { recursive: true });
  return playwright.launch({
    executablePath: await chromium.executablePath(),
    args: [...chromium.args.filter((flag) => !UNSAFE_FLAGS.has(flag)), "--disable-background-networking", "--no-first-run"],
    headless: true,
  });
};

export interface WatchOptions {
  /** An origin allowed to use the clipboard (the copy buttons). */
  readonly clipboardFor?: string;
  /** A console error this suite expects (beside the error pages' own 4xx statuses). */
  readonly expectedError?: RegExp;
  /** The window's size; 1280 × 800 unless given (a phone's is 390 × 844). */
  readonly viewport?: { readonly width: number; readonly height: number };
}

/** A desktop window, the size every browser suite uses unless it says otherwise. */
export const DESKTOP = { width: 1280, height: 800 } as const;

/** A phone's window (an iPhone 12 to 15, in CSS pixels). */
export const PHONE = { width: 390, height: 844 } as const;

/**
 * A page in a new browser context (1280 × 800 unless `options.viewport` says otherwise) whose
 * problems are collected: console errors (a CSP violation, a resource that fails to load), script
 * errors and dialogs. An error page's own 4xx status is logged against the page itself and is
 * expected. The context stays open until the browser closes: the package's Chromium is one
 * process, which ends with the first context closed.
 */
export const watchedPage = async (browser: Browser, options: WatchOptions = {}): Promise<{ page: Page; problems: string[] }> => {
  const context = await browser.newContext({ viewport: options.viewport ?? DESKTOP });
  if (options.clipboardFor !== undefined) await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: options.clipboardFor });
  const page = await context.newPage();
  const problems: string[] = [];
  const expected = (text: string, url: string) =>
    (url === page.url() && /^Failed to load resource: the server responded with a status of 4\d\d/.test(text)) ||
    (options.expectedError?.test(text) ?? false);
  page.on("console", (message) => {
    if (message.type() === "error" && !expected(message.text(), message.location().url)) problems.push(message.text());
  });
  page.on("pageerror", (error) => void problems.push(error.message));
  page.on("dialog", (dialog) => void problems.push(`dialog: ${dialog.message()}`));
  return { page, problems };
};
