// Filters whose decision needs state shared by every process of the node and must stay atomic with
// the queue push: the host page budget and the cap on hosts per registrable domain are decided in
// Lua (frontier lib.lua add_links) in the same call that queues the URL. The crawl learns their
// refusals from the script's drop counts; `inspect url` builds them here from the facts it read, so
// its chain asks the same questions in the same order.
import type { AdmissionFilter, Refusal } from "./verdict.js";

export function hostBudgetRefusal(admitted: number, budget: number): Refusal {
  return { filter: "host-budget", reason: "host-budget", detail: `its host has used its page budget (${admitted} of ${budget} URLs admitted)` };
}

export function domainHostsRefusal(domain: string, hosts: number, cap: number): Refusal {
  return {
    filter: "domain-hosts", reason: "domain-hosts",
    detail: `its registrable domain ${domain} already has ${hosts} hosts (cap ${cap}, --max-hosts-per-domain): a new host of it admits nothing`,
  };
}

/** The host budget, from a host's admitted count as read from Redis. */
export class HostBudgetFacts implements AdmissionFilter {
  readonly name = "host-budget" as const;

  constructor(private readonly admitted: (host: string) => number, private readonly budget: number) {}

  check(_url: string, host: string): Refusal | undefined {
    if (this.budget <= 0) return undefined;
    const n = this.admitted(host);
    return n >= this.budget ? hostBudgetRefusal(n, this.budget) : undefined;
  }
}

/** The hosts-per-domain cap, from the domain's host count as read from Redis (for a host not admitted yet). */
export class DomainHostsFacts implements AdmissionFilter {
  readonly name = "domain-hosts" as const;

  constructor(private readonly facts: (host: string) => { domain: string; hosts: number; known: boolean }, private readonly cap: number) {}

  check(_url: string, host: string): Refusal | undefined {
    if (this.cap <= 0) return undefined;
    const f = this.facts(host);
    return !f.known && f.hosts >= this.cap ? domainHostsRefusal(f.domain, f.hosts, this.cap) : undefined;
  }
}
