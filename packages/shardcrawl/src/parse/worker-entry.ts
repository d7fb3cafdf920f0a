// The piscina worker's entry: the parse task for the setup the parser process passed as workerData,
// its results wrapped so piscina moves their buffers to the main thread instead of copying them.
// piscina is imported here only, so a parser that parses inline (parserThreads 0) never loads it.
import { workerData } from "node:worker_threads";
import { move, transferableSymbol, valueSymbol } from "piscina";
import { makeParseTask, type WorkerLost, type WorkerSetup, type WorkerTask } from "./worker.js";
import { packWorkerLinks, type PackedWorkerResult } from "./worker-transfer.js";

/** A whole ArrayBuffer that only `view` uses (small Buffers share a pool, which must not be transferred). */
function ownsBuffer(view: ArrayBufferView): view is ArrayBufferView<ArrayBuffer> {
  return view.buffer instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === view.buffer.byteLength;
}

/** Wraps a worker's result so piscina transfers the listed views' buffers instead of copying them. */
export function transferring<T extends object>(value: T, views: readonly ArrayBufferView[]): T {
  const list = [...new Set(views.filter(ownsBuffer).map((v) => v.buffer))];
  return move({ [transferableSymbol]: list, [valueSymbol]: value } as never) as unknown as T;
}

const setup = workerData as WorkerSetup;
const parse = makeParseTask(setup);

export default function parseInWorker(task: WorkerTask): PackedWorkerResult | WorkerLost {
  const r = parse(task);
  if (!("warc" in r)) return r;
  const links = packWorkerLinks(r.links, setup.bloom.k);
  return transferring({ ...r, links }, [r.warc, links.numbers, links.bloom, ...(r.wet ? [r.wet] : []), ...(r.wat ? [r.wat] : [])]);
}
