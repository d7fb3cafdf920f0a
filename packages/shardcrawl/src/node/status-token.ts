// The status token: SHARDCRAWL_STATUS_TOKEN, or the contents of the file SHARDCRAWL_STATUS_TOKEN_FILE
// names (the `_FILE` convention of container images and systemd credentials, so the secret stays
// out of the environment listing and out of compose files). A node that serves off loopback and
// finds no file makes one with a random token (mode 0600): the containers of one deployment share
// the file on a volume, so `docker compose up` works without a secret written into the repository.
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname } from "node:path";

/** Tokens are short; anything longer is not a token file. */
const MAX_TOKEN_FILE_BYTES = 4096;

export function readStatusToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.SHARDCRAWL_STATUS_TOKEN) return env.SHARDCRAWL_STATUS_TOKEN;
  const file = env.SHARDCRAWL_STATUS_TOKEN_FILE;
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`SHARDCRAWL_STATUS_TOKEN_FILE ${file}: ${(err as Error).message}`);
  }
  if (text.length > MAX_TOKEN_FILE_BYTES) throw new Error(`SHARDCRAWL_STATUS_TOKEN_FILE ${file}: over ${MAX_TOKEN_FILE_BYTES} bytes, not a token`);
  return text.trim() || undefined;
}

/** The token, creating SHARDCRAWL_STATUS_TOKEN_FILE when it is named and missing. */
export function ensureStatusToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const existing = readStatusToken(env);
  const file = env.SHARDCRAWL_STATUS_TOKEN_FILE;
  if (existing !== undefined || !file) return existing;
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${randomBytes(24).toString("hex")}\n`, { mode: 0o600 });
  try {
    // link() fails if another node made the file first: then everyone reads that one.
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  return readStatusToken(env);
}
