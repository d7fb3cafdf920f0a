// The piscina worker's entry: the parse task for the setup the parser process passed as workerData.
import { workerData } from "node:worker_threads";
import { makeParseTask, type WorkerSetup } from "./worker.js";

export default makeParseTask(workerData as WorkerSetup, true);
