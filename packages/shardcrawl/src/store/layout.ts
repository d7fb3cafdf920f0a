// Where a node's output goes: <out>/warc for WARC + CDXJ files, <out>/pages for the page log.
import { join } from "node:path";

export function outputLayout(outDir: string): { warcDir: string; pagesDir: string } {
  return { warcDir: join(outDir, "warc"), pagesDir: join(outDir, "pages") };
}
