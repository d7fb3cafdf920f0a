// Byte encodings simweb writes. Node encodes UTF-8 and Latin-1 natively; windows-1252 differs from
// Latin-1 only in 0x80-0x9F, so a 27-entry table finishes the job (no iconv dependency needed).

const CP1252_HIGH: Record<string, number> = {
  "€": 0x80, "‚": 0x82, "ƒ": 0x83, "„": 0x84, "…": 0x85, "†": 0x86, "‡": 0x87, "ˆ": 0x88, "‰": 0x89,
  "Š": 0x8a, "‹": 0x8b, "Œ": 0x8c, "Ž": 0x8e, "‘": 0x91, "’": 0x92, "“": 0x93, "”": 0x94, "•": 0x95,
  "–": 0x96, "—": 0x97, "˜": 0x98, "™": 0x99, "š": 0x9a, "›": 0x9b, "œ": 0x9c, "ž": 0x9e, "Ÿ": 0x9f,
};

/** Encodes text as windows-1252; characters it lacks become "?". */
export function encodeCp1252(s: string): Buffer {
  const out = Buffer.allocUnsafe(s.length);
  let n = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (c < 0x80 || (c >= 0xa0 && c <= 0xff)) out[n++] = c;
    else out[n++] = CP1252_HIGH[ch] ?? 0x3f;
  }
  return out.subarray(0, n);
}

export function encodeText(s: string, charset: "utf-8" | "windows-1252"): Buffer {
  return charset === "utf-8" ? Buffer.from(s, "utf8") : encodeCp1252(s);
}
