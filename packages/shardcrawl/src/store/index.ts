// Output of a node: WARC 1.1 files with CDXJ indexes, the page log, and crash repair.
export { sha1Base32, base32 } from "./digest.js";
export {
  buildPageRecords,
  buildWarcinfo,
  buildMetadataRecord,
  newRecordId,
  WarcInputError,
  DEFAULT_GZIP_LEVEL,
  type PageRecords,
  type PageRecordOptions,
  type BuiltRecord,
  type WarcinfoOptions,
  type MetadataRecordInput,
} from "./warc-record.js";
export {
  WarcFileWriter,
  type WarcFileWriterOptions,
  type WarcAppend,
  type WarcLocation,
  type FinishedWarcFile,
  type WarcWriterStats,
} from "./warc-file.js";
export { PageLogWriter, serializePageLogLine, type PageLogWriterOptions, type FinishedPageLog } from "./page-log.js";
export { surtKey, cdxTimestamp, cdxjLine, mimeOf, type CdxFields, type CdxjEntry } from "./cdxj.js";
export { repairOutputDir, repairWarcFile, repairPageLog, type RepairReport, type RepairedFile, type RepairOptions } from "./repair.js";
export { verifyWarcFile, scanWarcFile, type WarcVerifyReport, type WarcRecordView } from "./warc-reader.js";
export { StoreWriteError } from "./append-file.js";
export { StoreBusyError } from "./serial-queue.js";
export { outputLayout } from "./layout.js";
