// Parse stage "write": a parsed page's WARC records (and WET/WAT/index rows), then its page-log
// line, then (continuous mode) its re-crawl history. All of it before the ack, so a crash repeats
// a page and never loses one.
import type { FetchedPage, PageLogLine } from "../shared/types.js";
import { readSpooled, type SpoolRef } from "../store/body-spool.js";
import type { WarcAppend, WarcLocation } from "../store/warc-file.js";
import { captureFields, type ParsedLine } from "./page-line.js";
import type { WorkerResult } from "./worker.js";

/** A page through the parse stage, on its way to be written and acknowledged. */
export interface ParsedPage {
  id: string;
  res: WorkerResult;
  line: ParsedLine;
  /** Continuous mode only: the fetched page, recorded in the re-crawl history after the write. */
  page?: FetchedPage;
  /** Where the page's body waits (the parse queue then carries none). */
  spool?: SpoolRef;
}

/** What the write stage needs of the WARC writer (store/warc-file.ts WarcFileWriter). */
export interface WarcSink {
  append(rec: WarcAppend): Promise<WarcLocation>;
}

/** What it needs of the re-crawl history (continuous mode). */
export interface RecrawlSink {
  recordPage(page: FetchedPage, contentDigest: string | undefined, bodyBytes?: number, loadBody?: () => Buffer): Promise<unknown>;
  recordSitemap(page: FetchedPage): Promise<unknown>;
}

export interface PageOutputDeps {
  warc: WarcSink;
  warcinfoId: string;
  pageLog: { append(line: PageLogLine): Promise<void> };
  /** Set when WET, WAT or the Parquet index are written beside the WARC files. */
  derivatives: boolean;
  nodeName: string;
  recrawl: RecrawlSink | null;
  spoolDir: string;
  log(msg: string): void;
}

export class PageOutput {
  constructor(private readonly d: PageOutputDeps) {}

  async write(p: ParsedPage): Promise<void> {
    const { res } = p;
    const loc = await this.d.warc.append({
      data: res.warc,
      warcinfoId: this.d.warcinfoId,
      responseOffset: res.responseOffset,
      responseLength: res.responseLength,
      cdx: res.cdx,
      ...(this.d.derivatives ? { derivatives: { ...(res.wet ? { wet: res.wet } : {}), ...(res.wat ? { wat: res.wat } : {}), capture: captureFields(p.line, this.d.nodeName) } } : {}),
    });
    await this.d.pageLog.append({ ...p.line, warc: loc });
    await this.recordHistory(p);
  }

  private async recordHistory(p: ParsedPage): Promise<void> {
    const { recrawl } = this.d;
    if (!recrawl || !p.page) return;
    const { res } = p;
    const page = p.page;
    // A lost history update costs one observation, never the page: log it and go on.
    const facts = res.facts;
    const kept = facts?.contentDigest !== undefined
      ? recrawl.recordPage(page, facts.contentDigest, res.bodyBytes, () => this.withBody(page, p.spool).body) // the body only for listings and feed links
      : res.contentType?.includes("xml") ? Promise.resolve().then(() => recrawl.recordSitemap(this.withBody(page, p.spool))) : null; // sitemap lastmod: change hints
    await kept?.catch((err: unknown) => this.d.log(`re-crawl history of ${p.line.url} not recorded: ${(err as Error).message}`));
  }

  /** The page with its body read back from the spool (still referenced: the page is not acked yet). */
  private withBody(page: FetchedPage, spool: SpoolRef | undefined): FetchedPage {
    return spool ? { ...page, body: readSpooled(this.d.spoolDir, spool) } : page;
  }
}
