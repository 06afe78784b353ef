import { readFile, writeFile } from "node:fs/promises";

/**
 * docs/performance.md is shared: the API benchmark (`npm run bench`) writes the file, and every
 * other benchmark owns one section of it between `<!-- name:start -->` and `<!-- name:end -->`,
 * which each writer keeps as it is.
 */

/** The two markers around the section of benchmark `name`. */
export const sectionMarkers = (name: string): { readonly start: string; readonly end: string } => ({
  start: `<!-- ${name}:start -->`,
  end: `<!-- ${name}:end -->`,
});

const MARKED_SECTION = /<!-- ([\w-]+):start -->[\s\S]*?<!-- \1:end -->/g;

const readIfThere = (path: string): Promise<string | undefined> =>
  readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });

/** Every marked section of the report at `path`, to keep when the API benchmark rewrites it. */
export const markedSections = async (path: string): Promise<string[]> => (await readIfThere(path))?.match(MARKED_SECTION) ?? [];

/**
 * Replaces benchmark `name`'s section of the report at `path` with `section` (markers included), or
 * appends it; creates the file if missing. The rest of the file stays as it is.
 */
export const writeMarkedSection = async (path: string, name: string, section: string): Promise<void> => {
  const { start, end } = sectionMarkers(name);
  const current = await readIfThere(path);
  if (current === undefined) return writeFile(path, `# Performance\n\n${section}`);
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  if (from !== -1 && to > from) {
    const after = current.slice(to + end.length).replace(/^\n/, "");
    return writeFile(path, `${current.slice(0, from)}${section}${after}`);
  }
  return writeFile(path, `${current.replace(/\n*$/, "\n\n")}${section}`);
};
