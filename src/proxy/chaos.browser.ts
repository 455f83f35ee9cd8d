/**
 * Browser bundles' stand-in for ./chaos.ts (package.json "browser"): faults on demand are left
 * out of page playback, which must fit its 100 KB budget (the fault shapes of every provider and
 * the damaged-stream writer are about 1.5 KB of it, gzipped). A page that asks for a fault (the
 * `x-tapedeck-chaos` header, `fetch.chaos()`) gets E_CHAOS_MODE saying to run that test in Node.
 */
import { chaosUnavailable } from '../chaos/refused.ts';
import type { ChaosOptions } from '../chaos/options.ts';
import type { TapeMode } from '../store/mode.ts';
import type { ChaosPlan, DamagedAnswer, HttpChaos, SessionChaos } from './chaos.ts';

export type { ChaosOptions } from '../chaos/options.ts';
export type { ChaosPlan, DamagedAnswer, DamagePlan, HttpChaos, SessionChaos } from './chaos.ts';
export { CHAOS_HEADER, withoutChaosHeader } from '../chaos/header.ts';

/** No fault answers a call in a page. */
export function faultsInPlaceOfRecordings(_faults: unknown): { calls: number; text: string } {
  return { calls: 0, text: '' };
}

/** No chaos in a page: asking for it is refused, and no request gets a fault. */
export function openChaos(opts: ChaosOptions | undefined, _mode: TapeMode, _warn: (m: string) => void): HttpChaos | undefined {
  if (opts !== undefined) throw chaosUnavailable();
  return undefined;
}

export function openSessionChaos(): SessionChaos | undefined {
  return undefined;
}


export async function planChaos(): Promise<ChaosPlan> {
  throw chaosUnavailable();
}

export function faultHeader(): string | undefined {
  return undefined;
}

export function damagedAnswer(): DamagedAnswer {
  throw chaosUnavailable();
}

export async function liveDamageAnswer(): Promise<Response> {
  throw chaosUnavailable();
}

export function statusFaultHeaders(): Record<string, string> {
  throw chaosUnavailable();
}

export function faultSent(): void {
  throw chaosUnavailable();
}

export function heldUntilAborted(): Promise<Response> {
  throw chaosUnavailable();
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function abandonedBy(): undefined {
  return undefined;
}

export async function lateBy(): Promise<void> {
  throw chaosUnavailable();
}

/** See ./chaos.ts; a page injects no faults, and records nothing behind one. */
export function recordedBehind(): boolean {
  return false;
}

export function needsRecordBehind(): boolean {
  return false;
}

export async function recordBehind(): Promise<void> {}

