// The node starts only with a User-Agent that tells site owners how to reach the operator.
import { describe, expect, it } from "vitest";
import { checkUserAgentContact, missingContact, USER_AGENT_PLACEHOLDER, UserAgentContactError } from "../../src/node/user-agent-contact.js";
import { DEFAULT_USER_AGENT } from "../../src/node/config.js";

describe("User-Agent contact", () => {
  it.each([
    "mycrawler/1.0 (+https://example.org/crawler)",
    "mycrawler/1.0 (+http://bot.example.org)",
    "mycrawler/1.0 (crawler@example.org)",
    "MyCrawler/2 (compatible; +https://example.org/bot.html; ops@example.co.uk)",
  ])("accepts %s", (ua) => {
    expect(missingContact(ua)).toBeUndefined();
    expect(() => checkUserAgentContact({ userAgent: ua, allowPrivate: false })).not.toThrow();
  });

  it.each([
    ["mycrawler/1.0", /neither an http\(s\) URL nor an e-mail address/],
    ["mycrawler/1.0 (ftp://example.org)", /neither/],
    ["mycrawler/1.0 (https://localhost)", /neither/],
    ["mycrawler/1.0 (@example)", /neither/],
    [DEFAULT_USER_AGENT, /the default/],
    [`shardcrawl/0.1 (+${USER_AGENT_PLACEHOLDER})`, /placeholder/],
  ])("refuses %s", (ua, why) => {
    expect(missingContact(ua)).toMatch(why);
    expect(() => checkUserAgentContact({ userAgent: ua, allowPrivate: false })).toThrow(UserAgentContactError);
  });

  it("loopback tests (--allow-private) are exempt, except from the placeholder", () => {
    expect(() => checkUserAgentContact({ userAgent: "testbot/1", allowPrivate: true })).not.toThrow();
    expect(() => checkUserAgentContact({ userAgent: `x (${USER_AGENT_PLACEHOLDER})`, allowPrivate: true })).toThrow(/exit code 78/i);
    try {
      checkUserAgentContact({ userAgent: "testbot/1", allowPrivate: false });
    } catch (err) {
      expect((err as UserAgentContactError).exitCode).toBe(78);
    }
  });
});
