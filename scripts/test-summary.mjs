// Prints vitest's JSON report as one plain closing line: "tests: N passed, N failed, N skipped".
import { readFileSync } from "node:fs";
try {
  const r = JSON.parse(readFileSync(process.argv[2] ?? "tmp/vitest.json", "utf8"));
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
} catch (err) {
  console.log(`tests: no report written (${err.message})`);
}
