// A site owner who sees our requests must be able to reach whoever runs the crawl: the node does
// not start unless its User-Agent holds a contact (an http(s) URL or an e-mail address) that is
// the operator's -- not the project's default URL, not the deploy files' placeholder. Loopback
// tests (--allow-private) are exempt, except from the placeholder.
import { DEFAULT_USER_AGENT } from "./config.js";

/** What the shipped fleet and compose configs carry until the operator sets a real contact. */
export const USER_AGENT_PLACEHOLDER = "SET-YOUR-CONTACT";
/** sysexits' EX_CONFIG: the configuration is refused; see docs/crawling.md "Exit codes". */
export const EXIT_NO_CONTACT = 78;

export class UserAgentContactError extends Error {
  readonly exitCode = EXIT_NO_CONTACT;
}

const URL_RE = /\bhttps?:\/\/[^\s/$.?#()<>;,][^\s()<>;,]*\.[^\s()<>;,]+/i;
const EMAIL_RE = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/;

/** Why `userAgent` gives no contact, or undefined when it does. */
export function missingContact(userAgent: string): string | undefined {
  if (userAgent.includes(USER_AGENT_PLACEHOLDER)) return `it still holds the placeholder ${USER_AGENT_PLACEHOLDER}`;
  if (userAgent.trim() === DEFAULT_USER_AGENT) return "it is the default, which names the shardcrawl project, not you";
  if (!URL_RE.test(userAgent) && !EMAIL_RE.test(userAgent)) return "it holds neither an http(s) URL nor an e-mail address";
  return undefined;
}

/** Throws UserAgentContactError (exit code 78) when the node may not start with this User-Agent. */
export function checkUserAgentContact(config: { userAgent: string; allowPrivate: boolean }): void {
  const why = missingContact(config.userAgent);
  if (why === undefined) return;
  if (config.allowPrivate && !config.userAgent.includes(USER_AGENT_PLACEHOLDER)) return;
  throw new UserAgentContactError(
    `refusing to start: the User-Agent ${JSON.stringify(config.userAgent)} gives site owners no way to reach you (${why}). ` +
      `Set --user-agent (config userAgent) to name your crawler and a contact, e.g. "mycrawler/1.0 (+https://example.org/crawler; crawler@example.org)"; ` +
      `optionally --from <e-mail> (config fromHeader). Exit code ${EXIT_NO_CONTACT}.`,
  );
}
