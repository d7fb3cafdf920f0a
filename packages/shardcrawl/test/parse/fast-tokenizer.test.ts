import fc from "fast-check";
import { Tokenizer, type TokenizerCallbacks } from "htmlparser2";
import { describe, expect, it } from "vitest";
import { FastTokenizer, fastTokenizerActive } from "../../src/parse/fast-tokenizer.js";

/** Every callback with its arguments, in order. */
function tokens(Impl: typeof Tokenizer, chunks: readonly string[]): unknown[][] {
  const out: unknown[][] = [];
  const record =
    (name: string) =>
    (...args: unknown[]) => {
      out.push([name, ...args]);
    };
  const cbs: TokenizerCallbacks = {
    onattribdata: record("attribdata"),
    onattribentity: record("attribentity"),
    onattribend: record("attribend"),
    onattribname: record("attribname"),
    oncdata: record("cdata"),
    onclosetag: record("closetag"),
    oncomment: record("comment"),
    ondeclaration: record("declaration"),
    onend: record("end"),
    onopentagend: record("opentagend"),
    onopentagname: record("opentagname"),
    onprocessinginstruction: record("processinginstruction"),
    onselfclosingtag: record("selfclosingtag"),
    ontext: record("text"),
    ontextentity: record("textentity"),
  };
  const tokenizer = new Impl({ decodeEntities: true }, cbs);
  for (const chunk of chunks) tokenizer.write(chunk);
  tokenizer.end();
  return out;
}

function same(chunks: readonly string[]): void {
  expect(tokens(FastTokenizer, chunks)).toEqual(tokens(Tokenizer, chunks));
}

const PIECES = [
  "<a href=", "<A HREF='", '"', "'", ">", "</a>", "<a\thref = x&amp;y>", "<base href=/b/>", "<title>", "</title>",
  "<script>", "</script>", "</scr", "<style>", "</style>", "<textarea>", "</textarea>", "<noscript>", "</noscript>",
  "<svg>", "</svg>", "<meta name=robots content=", "<p class=\"a b\" id=x data-x='&lt;'>", "&amp;", "&amp", "&#0;",
  "&#x110000;", "&nbsp", "&notin;", "&copy=", "&", "<!--", "-->", "--!>", "<!-->", "<!DOCTYPE html>", "<!doc", "<![CDATA[",
  "]]>", "<?", "?>", "/>", "< /a>", "</ a>", "</>", "<>", "a=b", "=", " ", "\n", "\t", "\f", "\r", "\u001c", "\u0000",
  "日本", "😀", "<plaintext>", "<iframe>", "</iframe>", "<xmp>", "<noembed>", "<noframes>", "<", "x",
];

describe("FastTokenizer", () => {
  it("runs its own loop with the pinned htmlparser2 (the load-time self-check passed)", () => {
    expect(fastTokenizerActive).toBe(true);
  });

  it("emits the stock Tokenizer's callbacks on markup-like strings, whole and in chunks", () => {
    const piece = fc.oneof(fc.constantFrom(...PIECES), fc.string({ unit: "binary", maxLength: 8 }));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 80 }), fc.array(fc.nat(), { maxLength: 6 }), (parts, cuts) => {
        const html = parts.join("");
        same([html]);
        const points = [...new Set(cuts.map((c) => (html.length === 0 ? 0 : c % html.length)))].sort((a, b) => a - b);
        const chunks = [...points, html.length].map((end, i) => html.slice(i === 0 ? 0 : points[i - 1], end));
        same(chunks.filter((c) => c !== ""));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 3000) },
    );
  });

  it("emits the stock Tokenizer's callbacks on a page-shaped document", () => {
    const page =
      `<!DOCTYPE html><html lang=en><head><title>A &amp; B</title><script>if (a<b && c) x="</div>";</script>` +
      `<style>p{x:y}</style></head><body class="x &quot;y&quot;">` +
      Array.from({ length: 200 }, (_, i) => `<div id=d${i}><a href="/p?i=${i}&amp;j=1" rel='nofollow'>w&eacute;rd ${i}</a> text &lt; more</div>\n`).join("") +
      `<!-- comment --><p>tail &hellip</p></body></html>`;
    same([page]);
    same([page.slice(0, 1000), page.slice(1000, 1001), page.slice(1001)]);
  });

  it("emits the stock Tokenizer's callbacks on long runs of entities and unterminated values", () => {
    // The paths that remember the next '&', '<' or quote across many stops.
    same(["<p>" + "&amp;".repeat(20_000) + "<b>x</b>"]);
    same(["<a href='" + "&amp;".repeat(20_000)]);
    same(['<a href="' + "&lt;x".repeat(20_000) + '" title=\'&gt;\'>']);
  });
});
