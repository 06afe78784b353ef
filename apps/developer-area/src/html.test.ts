import { describe, expect, it } from "vitest";
import { html } from "./html.ts";

describe("html", () => {
  it.each([
    ["markup", "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"],
    ["an attribute breakout", `" onmouseover="x`, "&quot; onmouseover=&quot;x"],
    ["single quotes and ampersands", "Tom's & Jerry's", "Tom&#39;s &amp; Jerry&#39;s"],
    ["a number", 42, "42"],
    ["nothing", undefined, ""],
    ["false", false, ""],
  ])("escapes %s", (_case, value, expected) => {
    expect(html`<p title="${value}">${value}</p>`.text).toBe(`<p title="${expected}">${expected}</p>`);
  });

  it("nests its own markup unescaped and escapes every item of a list", () => {
    const items = ["<b>", "ok"].map((item) => html`<li>${item}</li>`);
    expect(html`<ul>${items}</ul>`.text).toBe("<ul><li>&lt;b&gt;</li><li>ok</li></ul>");
  });
});
