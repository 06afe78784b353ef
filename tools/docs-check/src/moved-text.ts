import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { missingTerms, readDocs, REPOSITORY_ROOT, termsOf } from "./docs.ts";

/**
 * Did the docs keep what a README held? `node tools/docs-check/src/moved-text.ts <revision>…` reads
 * README.md at each git revision (a branch that still edits the old one-file README, say), and
 * prints every inline code span, setting name and code line of it that README.md and docs/*.md
 * no longer hold; exit 1 when any is missing. `--save <file>` writes the first revision's terms, one
 * a line (how `test/readme-before-split.terms` was made).
 */

const args = process.argv.slice(2);
const saveAt = args.indexOf("--save");
const savePath = saveAt >= 0 ? args[saveAt + 1] : undefined;
const revisions = saveAt < 0 ? args : args.filter((_, index) => index !== saveAt && index !== saveAt + 1);
if (revisions.length === 0) {
  process.stderr.write("usage: node tools/docs-check/src/moved-text.ts <git revision>… [--save <file>]\n");
  process.exit(2);
}

const docs = await readDocs();
let missingAny = false;
for (const revision of revisions) {
  const readme = execFileSync("git", ["show", `${revision}:README.md`], { cwd: REPOSITORY_ROOT, encoding: "utf8" });
  const terms = termsOf(readme);
  if (savePath !== undefined && revision === revisions[0]) writeFileSync(savePath, terms.join("\n") + "\n");
  const missing = missingTerms(terms, docs);
  process.stdout.write(`${revision}: ${terms.length} terms, ${missing.length} missing from README.md and docs/*.md\n`);
  for (const term of missing) process.stdout.write(`  ${term}\n`);
  missingAny ||= missing.length > 0;
}
process.exit(missingAny ? 1 : 0);
