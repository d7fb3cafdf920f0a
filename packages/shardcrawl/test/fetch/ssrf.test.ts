import { describe, expect, it } from "vitest";
import { blockReason, isBlockedAddress } from "../../src/fetch/ssrf.js";

describe("isBlockedAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["0.0.0.0", "this-network"],
    ["0.1.2.3", "this-network"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "reserved-or-broadcast"],
    ["240.0.0.1", "reserved-or-broadcast"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback (via ipv4-mapped ipv6)"],
    ["::ffff:7f00:1", "loopback (via ipv4-mapped ipv6)"],
    ["::FFFF:A9FE:A9FE", "link-local (via ipv4-mapped ipv6)"],
    ["::ffff:10.0.0.1", "private (via ipv4-mapped ipv6)"],
    ["::127.0.0.1", "loopback (via ipv4-compatible ipv6)"],
    ["::a00:1", "private (via ipv4-compatible ipv6)"],
    ["64:ff9b::127.0.0.1", "loopback (via nat64)"],
    ["64:ff9b::a9fe:a9fe", "link-local (via nat64)"],
    ["64:ff9b::c0a8:1", "private (via nat64)"],
    ["2002:7f00:1::", "loopback (via 6to4)"],
    // legacy IPv4 spellings, as inet_aton and URL parsers read them
    ["2130706433", "loopback"],
    ["0177.0.0.1", "loopback"],
    ["0x7f.1", "loopback"],
    ["0x7f000001", "loopback"],
    ["127.1", "loopback"],
    ["017700000001", "loopback"],
    ["0xA9.0xFE.0xA9.0xFE", "link-local"],
  ])("blocks %s (%s)", (ip, reason) => {
    expect(blockReason(ip)).toBe(reason);
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it.each(["8.8.8.8", "1.1.1.1", "93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808"])(
    "allows public address %s",
    (ip) => {
      expect(blockReason(ip)).toBeNull();
    },
  );

  it.each(["example.com", "", "1.2.3.4.5", "not an ip", "::g"])("fails closed on non-addresses: %j", (value) => {
    expect(blockReason(value)).toBe("not-an-ip");
  });

  it.each([
    ["http://2130706433/", "127.0.0.1"],
    ["http://0177.0.0.1/", "127.0.0.1"],
    ["http://0x7f.1/", "127.0.0.1"],
    ["http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"],
    ["http://[0:0:0:0:0:ffff:a9fe:a9fe]/", "[::ffff:a9fe:a9fe]"],
  ])("odd spellings in URL hosts are canonicalized by the URL parser and still blocked: %s", (url, canonical) => {
    const host = new URL(url).hostname;
    expect(host).toBe(canonical);
    expect(isBlockedAddress(host)).toBe(true);
  });
});
