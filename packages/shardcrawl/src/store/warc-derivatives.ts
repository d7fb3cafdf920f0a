// The files derived from each WARC file, opened, written and finished with it (WarcFileWriter calls
// opened / written / finished), so they rotate together and share its name:
//   NAME.warc.gz      the WARC file (written by WarcFileWriter)
//   NAME.warc.wet.gz  WET: a warcinfo record, then one conversion record per HTML page (text)
//   NAME.warc.wat.gz  WAT: a warcinfo record, then one metadata record (JSON) per response record
//   NAME.parquet      the capture index: one row per response record, sorted at close
// The WET and WAT records arrive pre-built (gzip members, from the parse worker); the rows get
// their WARC location here, after the WARC write placed the record. All are written in the WARC
// writer's batch (one write per file per batch), so a page costs no extra write of its own.
//
// The WARC file and page log are the record of the crawl; these are derived from it. A derivative
// that cannot be written (I/O error, disk full) is dropped for the rest of its WARC file (left
// .open, counted, logged) and never fails the page, its WARC records, or the other derivatives.
import { join } from "node:path";
import { AppendFile } from "./append-file.js";
import { type CaptureFields, type CaptureRow, captureRow, writeCaptureIndex } from "./capture-index.js";
import { OPEN_SUFFIX } from "./file-names.js";
import { buildWarcinfo } from "./warc-record.js";

export interface DerivativeKindsEnabled {
  wet: boolean;
  wat: boolean;
  /** The Parquet capture index. */
  index: boolean;
}

/** What one append adds to the derivatives of the WARC file it lands in. */
export interface DerivativeAppend {
  wet?: Uint8Array;
  wat?: Uint8Array;
  /** Index fields of the response record (placed by the WARC writer). */
  capture?: CaptureFields;
}

export interface WarcDerivativesOptions extends DerivativeKindsEnabled {
  /** Folder of the WARC files: the derivatives sit beside them. */
  dir: string;
  /** warcinfo fields of the WET and WAT files (as the WARC file's). */
  warcinfo: Record<string, string | number | boolean | undefined>;
  gzipLevel?: number;
  /** Told of each derivative dropped (the crawl goes on without it). */
  onError?: (message: string) => void;
}

export interface DerivativeStats {
  wetRecords: number;
  watRecords: number;
  indexRows: number;
  wetBytes: number;
  watBytes: number;
  indexFiles: number;
  /** Derivative files dropped after an error (left .open or not written). */
  errors: number;
}

/** NAME.warc.gz -> NAME */
export function warcBaseName(warcName: string): string {
  return warcName.replace(/\.warc\.gz$/, "");
}

class DerivedFile {
  private constructor(
    readonly file: AppendFile,
    readonly finalPath: string,
  ) {}

  static async open(finalPath: string, warcinfo: WarcDerivativesOptions["warcinfo"], filename: string, gzipLevel: number | undefined): Promise<DerivedFile> {
    const file = await AppendFile.create(finalPath + OPEN_SUFFIX);
    try {
      await file.append(buildWarcinfo(warcinfo, { filename, ...(gzipLevel !== undefined ? { gzipLevel } : {}) }).data);
    } catch (err) {
      await file.abandon().catch(() => undefined);
      throw err;
    }
    return new DerivedFile(file, finalPath);
  }
}

interface OpenSet {
  warcName: string;
  wet: DerivedFile | null;
  wat: DerivedFile | null;
  rows: CaptureRow[] | null;
}

export class WarcDerivatives {
  readonly #opts: WarcDerivativesOptions;
  #open: OpenSet | null = null;
  readonly #stats: DerivativeStats = { wetRecords: 0, watRecords: 0, indexRows: 0, wetBytes: 0, watBytes: 0, indexFiles: 0, errors: 0 };

  constructor(opts: WarcDerivativesOptions) {
    this.#opts = opts;
  }

  get enabled(): DerivativeKindsEnabled {
    return { wet: this.#opts.wet, wat: this.#opts.wat, index: this.#opts.index };
  }

  get stats(): DerivativeStats {
    return { ...this.#stats };
  }

  #fail(what: string, err: unknown): void {
    this.#stats.errors += 1;
    this.#opts.onError?.(`${what}: ${(err as Error).message}; dropped for the rest of this WARC file`);
  }

  /** The WARC file `warcName` was opened: open its WET and WAT files, start its index. Never throws. */
  async opened(warcName: string): Promise<void> {
    if (this.#open !== null) await this.finished(this.#open.warcName);
    const base = warcBaseName(warcName);
    const set: OpenSet = { warcName, wet: null, wat: null, rows: this.#opts.index ? [] : null };
    for (const kind of ["wet", "wat"] as const) {
      if (!this.#opts[kind]) continue;
      const name = `${base}.warc.${kind}.gz`;
      try {
        set[kind] = await DerivedFile.open(join(this.#opts.dir, name), this.#opts.warcinfo, name, this.#opts.gzipLevel);
      } catch (err) {
        this.#fail(`opening ${name}`, err);
      }
    }
    this.#open = set;
  }

  /** Appends written to `warcName` at these locations: add their derivatives (one write per file). Never throws. */
  async written(warcName: string, items: ReadonlyArray<{ derivatives: DerivativeAppend; location: { file: string; offset: number; length: number } }>): Promise<void> {
    const set = this.#open;
    if (set === null || set.warcName !== warcName) return;
    const wet: Uint8Array[] = [];
    const wat: Uint8Array[] = [];
    for (const { derivatives: d, location } of items) {
      if (d.wet && d.wet.length > 0) wet.push(d.wet);
      if (d.wat && d.wat.length > 0) wat.push(d.wat);
      if (d.capture && set.rows) set.rows.push(captureRow(d.capture, location));
    }
    if (set.rows) this.#stats.indexRows += items.filter((i) => i.derivatives.capture).length;
    await Promise.all([this.#append(set, "wet", wet), this.#append(set, "wat", wat)]);
  }

  async #append(set: OpenSet, kind: "wet" | "wat", parts: Uint8Array[]): Promise<void> {
    const f = set[kind];
    if (f === null || parts.length === 0) return;
    try {
      await f.file.appendv(parts);
      let bytes = 0;
      for (const p of parts) bytes += p.length;
      this.#stats[kind === "wet" ? "wetRecords" : "watRecords"] += parts.length;
      this.#stats[kind === "wet" ? "wetBytes" : "watBytes"] += bytes;
    } catch (err) {
      set[kind] = null;
      await f.file.abandon().catch(() => undefined);
      this.#fail(`writing ${f.file.path}`, err);
    }
  }

  /** The WARC file `warcName` is finished: finish its WET and WAT files and write its sorted index. Never throws. */
  async finished(warcName: string): Promise<void> {
    const set = this.#open;
    if (set === null || set.warcName !== warcName) return;
    this.#open = null;
    for (const kind of ["wet", "wat"] as const) {
      const f = set[kind];
      if (f === null) continue;
      try {
        await f.file.finish(f.finalPath);
      } catch (err) {
        await f.file.abandon().catch(() => undefined);
        this.#fail(`finishing ${f.finalPath}`, err);
      }
    }
    if (set.rows) {
      const path = join(this.#opts.dir, `${warcBaseName(warcName)}.parquet`);
      try {
        await writeCaptureIndex(path, set.rows);
        this.#stats.indexFiles += 1;
      } catch (err) {
        this.#fail(`writing ${path}`, err);
      }
    }
  }
}
