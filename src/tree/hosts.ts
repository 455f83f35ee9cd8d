// Which host gave an answer, as `tapedeck tree` prints it. The origin is not in the request key,
// so an app that asks two OpenAI-compatible hosts the same conversation records one path with
// the answers of both: on a tape recorded for several hosts, each answer line names its host(s).
// A tape of one host, or of none (older tapes, ReplayCache tapes), prints no host at all.
//
// Hosts are told apart as the matcher tells origins apart (originKey in src/store/origins.ts: a
// loopback host's port is not compared, so a test server run on two ports is one host), with the
// same loopback rule (src/store/loopback.ts; origins.ts itself has a page's stand-in, which
// compares no hosts).

import { isLoopbackHost } from '../store/loopback.ts';
import type { Alternative } from './tree.ts';

/** How a recording that names no host is listed among hosts. */
const NO_HOST = '(no host recorded)';

/** An origin as it is compared (`key`), and its host with a port other than the default (`host`). */
function parse(origin: string): { key: string; host: string } {
  if (!URL.canParse(origin)) return { key: origin.toLowerCase(), host: origin.toLowerCase() };
  const u = new URL(origin);
  const host = isLoopbackHost(u.hostname) ? u.hostname : u.host;
  return { key: `${u.protocol}//${host}`, host };
}

/**
 * How the answers of a tree recorded from `origins` (`tree.origins`) name their hosts: a function
 * from an origin to its name, the host with its port when not the default (the whole origin when
 * one host was recorded under two schemes); undefined when the origins are one host or none, so
 * nothing is named.
 *
 * @example
 * const name = hostNamer(['https://api.openai.com', 'https://gw.example.com:8443'])
 * name?.('https://gw.example.com:8443') // 'gw.example.com:8443'
 * hostNamer(['http://127.0.0.1:4001', 'http://127.0.0.1:4002']) // undefined: one loopback host
 */
export function hostNamer(origins: Iterable<string>): ((origin: string | undefined) => string) | undefined {
  const parsed = new Map<string, { key: string; host: string }>();
  for (const o of origins) if (!parsed.has(o)) parsed.set(o, parse(o));
  const hostOfKey = new Map<string, string>();
  for (const { key, host } of parsed.values()) hostOfKey.set(key, host);
  if (hostOfKey.size < 2) return undefined;
  const schemes = new Map<string, number>();
  for (const host of hostOfKey.values()) schemes.set(host, (schemes.get(host) ?? 0) + 1);
  return (origin) => {
    if (origin === undefined) return NO_HOST;
    const { key, host } = parsed.get(origin) ?? parse(origin);
    return schemes.get(host)! > 1 ? key : host;
  };
}

/**
 * The hosts part of an answer line, for answers of one prompt that are the same message: the host
 * that gave it, or `same answer from a (2×), b` with each host's own count when several did.
 * `several` says whether the counts are in the text (the line then leaves out `recorded N×`).
 *
 * @example
 * answerHosts(answersOnThisLine, hostNamer(tree.origins)!) // { text: 'api.openai.com', several: false }
 */
export function answerHosts(alts: readonly Alternative[], name: (origin: string | undefined) => string): { text: string; several: boolean } {
  const counts = new Map<string, number>();
  const add = (host: string, n: number): void => void counts.set(host, (counts.get(host) ?? 0) + n);
  for (const a of alts) {
    if (a.origins.length === 0) add(name(undefined), a.recordings);
    else for (const o of a.origins) add(name(o.origin), o.recordings);
  }
  if (counts.size === 1) return { text: counts.keys().next().value!, several: false };
  return { text: `same answer from ${[...counts].map(([host, n]) => (n > 1 ? `${host} (${n}×)` : host)).join(', ')}`, several: true };
}
