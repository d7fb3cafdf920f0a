// A static Huffman code for URL paths (path + query), so the schedule's records keep the path in
// about 60% of its bytes: URL paths are mostly lower-case letters, digits, '/' and '-', which this
// code spells in 3-6 bits. Any other byte is an escape code + the raw 8 bits. The padding to a
// whole byte is 1-bits, a prefix of the end code (the longest code, all 1-bits, as in HPACK), so
// the decoder knows where the path ends without a length.
// The weight table IS the format: changing it changes every stored path (bump the record version).

const ESC = 256;
const EOS = 257;

/** Relative frequencies of path bytes (English letter frequencies, URL punctuation, IDs' digits). */
function weights(): Map<number, number> {
  const w = new Map<number, number>();
  const lower: Record<string, number> = {
    e: 12.7, t: 9.1, a: 8.2, o: 7.5, i: 7.0, n: 6.7, s: 6.3, h: 4.1, r: 6.0, d: 4.3, l: 4.0, c: 3.8, u: 2.8, m: 2.4, w: 1.6,
    f: 2.2, g: 2.0, y: 1.5, p: 2.9, b: 1.5, v: 1.0, k: 0.8, j: 0.3, x: 0.4, q: 0.1, z: 0.2,
  };
  for (const [c, f] of Object.entries(lower)) w.set(c.charCodeAt(0), f);
  for (let d = 0; d < 10; d++) w.set(48 + d, 3);
  for (let c = 65; c <= 90; c++) w.set(c, 0.3);
  const punct: Record<string, number> = { "/": 8, "-": 6, ".": 2, _: 1.5, "?": 0.6, "=": 1, "&": 0.6, "%": 0.6, "~": 0.05, ",": 0.1, "+": 0.15, ":": 0.05, ";": 0.03 };
  for (const [c, f] of Object.entries(punct)) w.set(c.charCodeAt(0), f);
  w.set(ESC, 0.3);
  w.set(EOS, 0.001);
  return w;
}

interface Code {
  /** Code length per symbol (0 = no code: escaped). */
  lengths: Uint8Array;
  codes: Uint32Array;
  /** Canonical decoding tables per length. */
  firstCode: number[];
  count: number[];
  offset: number[];
  symbols: number[];
  maxLen: number;
}

function build(): Code {
  const w = weights();
  // Huffman lengths; ties broken by symbol order, so the code is the same on every run.
  type Node = { weight: number; order: number; symbols: number[] };
  let nodes: Node[] = [...w.entries()].sort((a, b) => a[0] - b[0]).map(([s, f], i) => ({ weight: f, order: i, symbols: [s] }));
  const lengths = new Uint8Array(258);
  let order = nodes.length;
  while (nodes.length > 1) {
    nodes.sort((a, b) => a.weight - b.weight || a.order - b.order);
    const [x, y] = nodes as [Node, Node];
    for (const s of [...x.symbols, ...y.symbols]) lengths[s] = (lengths[s] as number) + 1;
    nodes = [{ weight: x.weight + y.weight, order: order++, symbols: [...x.symbols, ...y.symbols] }, ...nodes.slice(2)];
  }
  const symbols = [...w.keys()].sort((a, b) => (lengths[a] as number) - (lengths[b] as number) || a - b);
  const maxLen = lengths[symbols[symbols.length - 1] as number] as number;
  const codes = new Uint32Array(258);
  const firstCode: number[] = new Array<number>(maxLen + 1).fill(0);
  const count: number[] = new Array<number>(maxLen + 1).fill(0);
  const offset: number[] = new Array<number>(maxLen + 1).fill(0);
  let code = 0;
  let len = lengths[symbols[0] as number] as number;
  for (const [i, s] of symbols.entries()) {
    const l = lengths[s] as number;
    code <<= l - len;
    len = l;
    if (count[l] === 0) {
      firstCode[l] = code;
      offset[l] = i;
    }
    count[l] = (count[l] as number) + 1;
    codes[s] = code++;
  }
  if (symbols[symbols.length - 1] !== EOS || maxLen < 8) throw new Error("path-code: the end code must be the longest");
  return { lengths, codes, firstCode, count, offset, symbols, maxLen };
}

const CODE = build();

export class PathCodeError extends Error {}

/** The path's Huffman form (whole bytes, padded with 1-bits). */
export function encodePath(path: string): Buffer {
  const raw = Buffer.from(path, "utf8");
  // At most ESC + 8 bits per byte; codes are appended to `acc` and whole bytes taken off the top.
  const out = Buffer.allocUnsafe(Math.ceil((raw.length * ((CODE.lengths[ESC] as number) + 8)) / 8) + 1);
  let n = 0;
  let acc = 0;
  let bits = 0;
  const put = (code: number, len: number): void => {
    acc = acc * 2 ** len + code;
    bits += len;
    while (bits >= 8) {
      bits -= 8;
      const top = Math.floor(acc / 2 ** bits);
      out[n++] = top;
      acc -= top * 2 ** bits;
    }
  };
  for (const b of raw) {
    const l = CODE.lengths[b] as number;
    if (l > 0) put(CODE.codes[b] as number, l);
    else {
      put(CODE.codes[ESC] as number, CODE.lengths[ESC] as number);
      put(b, 8);
    }
  }
  if (bits > 0) out[n++] = acc * 2 ** (8 - bits) + (2 ** (8 - bits) - 1);
  return out.subarray(0, n);
}

export function decodePath(b: Buffer): string {
  const out: number[] = [];
  let code = 0;
  let len = 0;
  let escaped = -1;
  for (let i = 0; i < b.length * 8; i++) {
    const bit = ((b[i >> 3] as number) >> (7 - (i & 7))) & 1;
    if (escaped >= 0) {
      escaped = (escaped << 1) | bit;
      if (++len === 8) {
        out.push(escaped & 0xff);
        escaped = -1;
        len = 0;
      }
      continue;
    }
    code = (code << 1) | bit;
    len++;
    if (len > CODE.maxLen) throw new PathCodeError("path-code: no such code");
    const k = code - (CODE.firstCode[len] as number);
    if ((CODE.count[len] as number) > 0 && k >= 0 && k < (CODE.count[len] as number)) {
      const s = CODE.symbols[(CODE.offset[len] as number) + k] as number;
      if (s === EOS) throw new PathCodeError("path-code: an end code inside the path");
      code = 0;
      len = 0;
      if (s === ESC) escaped = 0;
      else out.push(s);
    }
  }
  // What is left must be padding: fewer than 8 bits, all 1 (a prefix of the end code).
  if (escaped >= 0 || len >= 8 || code !== (1 << len) - 1) throw new PathCodeError("path-code: the path ends inside a code");
  return Buffer.from(out).toString("utf8");
}
