import type { Page } from "playwright-core";
import { expect } from "vitest";

/**
 * Layout checks for the browser suites, on what a person sees rather than on what the markup
 * holds: whether the text of two elements is drawn on top of each other, whether an element's
 * text is cut off (by its own width, an ellipsis, an ancestor that hides what overflows it, or the
 * page's top or left edge), whether text stays inside the box it belongs to, and whether the page
 * fits the window's width. Text is measured as the browser lays it out: the boxes of its lines (a
 * Range's client rects), less what a clipping or scrolling ancestor hides. Text hidden on purpose
 * (`display: none`, `visibility: hidden`, a closed `<details>`, the 1 px `.visually-hidden` box)
 * is not drawn, so it is not measured. The assertions are soft: a test goes on after a failed one,
 * so one run lists every fault of a page.
 */

/** A rectangle in the viewport's coordinates (CSS pixels). */
interface Box {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

/** What the page reports of one element. */
interface MeasuredText {
  /** The start of its text, to name it in a failure. */
  readonly label: string;
  /** The boxes its text is drawn in, as far as its ancestors show them. */
  readonly boxes: ReadonlyArray<Box>;
  /** The indexes of the other elements measured that it contains. */
  readonly contains: ReadonlyArray<number>;
  /** How much wider its content is than its box (`scrollWidth - clientWidth`; 0 for an inline element). */
  readonly overflow: number;
  /** Pixels of its text (widths and heights added) that nothing shows: clipped without a scroll bar, or beyond the page's top or left edge. */
  readonly hidden: number;
  /** Pixels of its visible text (widths and heights added) drawn outside its container, when one was asked for. */
  readonly outside: number;
}

/** The few DOM types the measuring function uses (the tests' types have no DOM). */
interface DomElement {
  readonly parentElement: DomElement | null;
  readonly textContent: string | null;
  readonly clientLeft: number;
  readonly clientTop: number;
  readonly clientWidth: number;
  readonly clientHeight: number;
  readonly scrollWidth: number;
  getBoundingClientRect(): Box;
  contains(other: DomElement): boolean;
  closest(selector: string): DomElement | null;
  checkVisibility(options: { readonly visibilityProperty: boolean; readonly opacityProperty: boolean }): boolean;
}
interface DomText {
  readonly textContent: string | null;
  readonly parentElement: DomElement | null;
}
interface DomWindow {
  readonly scrollX: number;
  readonly scrollY: number;
  getComputedStyle(element: DomElement): { readonly overflowX: string; readonly overflowY: string };
  readonly document: {
    readonly documentElement: DomElement;
    createTreeWalker(root: DomElement, whatToShow: number): { nextNode(): DomText | null };
    createRange(): { selectNodeContents(node: DomText): void; getClientRects(): ArrayLike<Box> };
  };
}

/**
 * Measures `elements` in the page; `container` (a selector) names the box each element's text
 * must stay inside: its closest ancestor matching it. Runs in the browser, so it is
 * self-contained: it may use nothing of this module but types.
 */
const measureText = (elements: ReadonlyArray<DomElement>, container: string | null): MeasuredText[] => {
  const view = globalThis as unknown as DomWindow;
  const SHOW_TEXT = 4;
  // The padding box of an ancestor that clips what overflows it, and whether a scroll bar reaches the rest.
  const clipOf = (element: DomElement) => {
    const style = view.getComputedStyle(element);
    if (style.overflowX === "visible" && style.overflowY === "visible") return undefined;
    const outer = element.getBoundingClientRect();
    const left = outer.left + element.clientLeft;
    const top = outer.top + element.clientTop;
    const scrolls = /auto|scroll/.test(`${style.overflowX} ${style.overflowY}`);
    return { left, top, right: left + element.clientWidth, bottom: top + element.clientHeight, scrolls };
  };
  const intersection = (a: Box, b: Box): Box => ({
    left: Math.max(a.left, b.left), top: Math.max(a.top, b.top), right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom),
  });
  const width = (box: Box) => Math.max(0, box.right - box.left);
  const height = (box: Box) => Math.max(0, box.bottom - box.top);
  /** How much of `box` lies outside `bounds`, widths and heights added. */
  const beyond = (box: Box, bounds: Box) => {
    const inside = intersection(box, bounds);
    return width(box) - width(inside) + height(box) - height(inside);
  };
  // Nothing scrolls to text above or left of the page's origin.
  const page: Box = { left: -view.scrollX, top: -view.scrollY, right: Infinity, bottom: Infinity };
  return elements.map((element) => {
    const boxes: Box[] = [];
    let hidden = 0;
    const walker = view.document.createTreeWalker(element, SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const parent = node.parentElement;
      if ((node.textContent ?? "").trim() === "" || parent === null) continue;
      if (!parent.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
      const clips = [];
      for (let ancestor: DomElement | null = parent; ancestor !== null; ancestor = ancestor.parentElement) {
        const clip = clipOf(ancestor);
        if (clip !== undefined) clips.push(clip);
      }
      // A box of a pixel or less is text hidden on purpose (visually hidden, for screen readers).
      if (clips.some((clip) => width(clip) <= 1 || height(clip) <= 1)) continue;
      const range = view.document.createRange();
      range.selectNodeContents(node);
      for (const rect of Array.from(range.getClientRects())) {
        let shown: Box = { left: rect.left, top: rect.top, right: rect.right, bottom: rect.bottom };
        for (const clip of [...clips, { ...page, scrolls: false }]) {
          if (!clip.scrolls) hidden += beyond(shown, clip);
          shown = intersection(shown, clip);
        }
        if (width(shown) > 0.5 && height(shown) > 0.5) boxes.push(shown);
      }
    }
    const bounds = container === null ? null : element.parentElement?.closest(container)?.getBoundingClientRect() ?? null;
    return {
      label: (element.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 48),
      boxes,
      contains: elements.flatMap((other, index) => (other !== element && element.contains(other) ? [index] : [])),
      overflow: element.scrollWidth - element.clientWidth,
      hidden,
      outside: bounds === null ? 0 : boxes.reduce((sum, box) => sum + beyond(box, bounds), 0),
    };
  });
};

/** More than a pixel: text that merely touches, or a rounding error, is no fault. */
const TOLERANCE = 1;

const overlapOf = (a: Box, b: Box) => ({
  width: Math.min(a.right, b.right) - Math.max(a.left, b.left),
  height: Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top),
});

/**
 * Every pair of elements `selector` matches on `page` whose visible text is drawn on top of each
 * other, as `"A…" × "B…" (w × h px)`; an element and one inside it are not compared.
 */
export const overlappingText = async (page: Page, selector: string): Promise<string[]> => {
  const measured = await page.locator(selector).evaluateAll(measureText, null);
  const found: string[] = [];
  measured.forEach((first, i) => {
    measured.slice(i + 1).forEach((second, offset) => {
      const j = i + 1 + offset;
      if (first.contains.includes(j) || second.contains.includes(i)) return;
      const worst = first.boxes
        .flatMap((a) => second.boxes.map((b) => overlapOf(a, b)))
        .filter((overlap) => overlap.width > TOLERANCE && overlap.height > TOLERANCE)
        .sort((x, y) => y.width * y.height - x.width * x.height)[0];
      if (worst !== undefined) found.push(`"${first.label}" × "${second.label}" (${Math.round(worst.width)} × ${Math.round(worst.height)} px)`);
    });
  });
  return found;
};

/**
 * Every element `selector` matches on `page` whose text is not all shown: wider than its box (an
 * ellipsis, or text spilling out), partly hidden by an ancestor that clips without scrolling, or
 * beyond the page's top or left edge. Text a scroll bar can reach (a wide table on a phone) counts
 * as shown.
 */
export const cutText = async (page: Page, selector: string): Promise<string[]> =>
  (await page.locator(selector).evaluateAll(measureText, null)).flatMap(({ label, overflow, hidden }) => [
    ...(overflow > TOLERANCE ? [`"${label}" is ${overflow} px wider than its box`] : []),
    ...(hidden > TOLERANCE ? [`"${label}" has ${Math.round(hidden)} px of its text hidden`] : []),
  ]);

/** Every element `selector` matches on `page` whose visible text is drawn outside its closest ancestor matching `container`. */
export const textOutside = async (page: Page, selector: string, container: string): Promise<string[]> =>
  (await page.locator(selector).evaluateAll(measureText, container)).flatMap(({ label, outside }) =>
    outside > TOLERANCE ? [`"${label}" reaches ${Math.round(outside)} px outside its ${container}`] : []);

/** Asserts that `selector` matches at least one element on `page` and that no two of them draw their text over each other. */
export const expectNoOverlap = async (page: Page, selector: string): Promise<void> => {
  expect.soft(await page.locator(selector).count(), `nothing matches ${selector}`).toBeGreaterThan(0);
  expect.soft(await overlappingText(page, selector), `text drawn over other text (${selector}) on ${page.url()}`).toEqual([]);
};

/** Asserts that `selector` matches at least one element on `page` and that each shows all its text. */
export const expectTextShown = async (page: Page, selector: string): Promise<void> => {
  expect.soft(await page.locator(selector).count(), `nothing matches ${selector}`).toBeGreaterThan(0);
  expect.soft(await cutText(page, selector), `text cut off (${selector}) on ${page.url()}`).toEqual([]);
};

/** Asserts that `selector` matches at least one element on `page` and that each keeps its text inside its closest `container`. */
export const expectTextInside = async (page: Page, selector: string, container: string): Promise<void> => {
  expect.soft(await page.locator(selector).count(), `nothing matches ${selector}`).toBeGreaterThan(0);
  expect.soft(await textOutside(page, selector, container), `text outside its ${container} (${selector}) on ${page.url()}`).toEqual([]);
};

/** Asserts that `page` is no wider than its window: nothing makes the whole page scroll sideways. */
export const expectFitsWidth = async (page: Page): Promise<void> => {
  const { scrollWidth, clientWidth } = await page.evaluate(() => {
    const root = (globalThis as unknown as DomWindow).document.documentElement;
    return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth };
  });
  expect.soft(scrollWidth, `${page.url()} is wider than the window`).toBe(clientWidth);
};
