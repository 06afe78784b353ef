import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";

/**
 * Reading Platter's docs as text: the README a newcomer reads and `docs/*.md`, one file per reader
 * and subject. What the README once held must still be somewhere among them (`termsOf`,
 * `missingTerms`), and their links must land (`brokenLinks`).
 */

/** The repository's root (this file is `tools/docs-check/src/docs.ts`). */
export const REPOSITORY_ROOT = resolve(import.meta.dirname, "../../..");

/** One markdown file of the docs: its path relative to the repository root, and its text. */
export interface DocFile {
  readonly path: string;
  readonly text: string;
}

/** README.md and every `docs/*.md`, in that order. */
export const readDocs = async (root: string = REPOSITORY_ROOT): Promise<ReadonlyArray<DocFile>> => {
  const pages = (await readdir(join(root, "docs"))).filter((name) => name.endsWith(".md")).sort();
  const paths = ["README.md", ...pages.map((name) => `docs/${name}`)];
  return Promise.all(paths.map(async (path) => ({ path, text: await readFile(join(root, path), "utf8") })));
};

/** Runs of whitespace as one space, so a span that a line break splits still matches. */
export const collapseWhitespace = (text: string): string => text.replace(/\s+/g, " ").trim();

/** Markdown outside fenced code blocks, and the fenced blocks' lines, apart. */
const splitFences = (markdown: string): { readonly prose: string; readonly codeLines: ReadonlyArray<string> } => {
  const prose: Array<string> = [];
  const codeLines: Array<string> = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (line.trimStart().startsWith("```")) inFence = !inFence;
    else if (inFence) codeLines.push(line);
    else prose.push(line);
  }
  return { prose: prose.join("\n"), codeLines };
};

/** The lines of a text's fenced code blocks (commands, mostly), whitespace collapsed. */
export const codeBlockLines = (markdown: string): ReadonlyArray<string> =>
  splitFences(markdown).codeLines.map(collapseWhitespace).filter((line) => line.length > 0);

/** A setting's name as the docs write it: upper-case words joined by `_` (`WEBHOOK_TIMEOUT`). */
const SETTING_NAME = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;

/**
 * What a text promises, as checkable strings: every inline code span (an identifier, a setting, a
 * default, an error text), every setting name, and every line of its code blocks (a command), each
 * with its whitespace collapsed.
 */
export const termsOf = (markdown: string): ReadonlyArray<string> => {
  const { prose, codeLines } = splitFences(markdown);
  const spans = [...prose.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
  const settings = markdown.match(SETTING_NAME) ?? [];
  const terms = [...spans, ...settings, ...codeLines].map(collapseWhitespace).filter((term) => term.length > 0);
  return [...new Set(terms)];
};

/** The terms that appear nowhere in the docs (whitespace collapsed on both sides). */
export const missingTerms = (terms: ReadonlyArray<string>, docs: ReadonlyArray<DocFile>): ReadonlyArray<string> => {
  const all = collapseWhitespace(docs.map((doc) => doc.text).join("\n"));
  return terms.filter((term) => !all.includes(term));
};

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
export const anchorsOf = (markdown: string): ReadonlySet<string> => {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of splitFences(markdown).prose.split("\n")) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
};

/** A relative link of one doc that lands nowhere: its file is not among the docs' files, or its anchor is no heading there. */
export interface BrokenLink {
  readonly from: string;
  readonly target: string;
}

/**
 * The docs' relative links to markdown files (`docs/api.md#errors`, `operations.md`) whose file or
 * anchor does not exist. `exists` answers for links to files that are not docs (`apps/sdk/README.md`).
 */
export const brokenLinks = (docs: ReadonlyArray<DocFile>, exists: (path: string) => boolean): ReadonlyArray<BrokenLink> => {
  const byPath = new Map(docs.map((doc) => [doc.path, doc]));
  const broken: Array<BrokenLink> = [];
  for (const doc of docs) {
    const directory = doc.path.includes("/") ? doc.path.slice(0, doc.path.lastIndexOf("/") + 1) : "";
    for (const match of splitFences(doc.text).prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [file = "", anchor] = target.split("#");
      const path = file === "" ? doc.path : normalize(directory + file);
      const linked = byPath.get(path);
      const fileFound = linked !== undefined || exists(path);
      const anchorFound = anchor === undefined || (linked !== undefined && anchorsOf(linked.text).has(anchor));
      if (!fileFound || !anchorFound) broken.push({ from: doc.path, target });
    }
  }
  return broken;
};

/** A relative path with its `./` and `dir/../` steps resolved. */
const normalize = (path: string): string => {
  const parts: Array<string> = [];
  for (const part of path.split("/")) {
    if (part === "." || part === "") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return parts.join("/");
};
