/**
 * Two to four messages put in or taken out together, for a miss. An agent that now starts with
 * a planning turn sends its old prompt two messages later: compared position by position, the
 * miss said the prompt's text differed, quoting the new message against it. Node only: a page's
 * miss names the first message that differs (./message-runs.browser.ts; the bundle's budget).
 * One message put in, taken out or swapped with its neighbour is said by the miss itself; two
 * tool results swapped are said here, with why that happens.
 */
import type { MissDifference } from './diagnose.ts';
import { TOOL_ORDER_HINT } from './tool-order-hint.ts';

/**
 * The difference when messages `d` to `d + k - 1` (2 <= k <= 4) of one side stand before the
 * other side's message `d`, the fewer of the two sides' runs when both could be; else undefined.
 * `same` compares two messages, `role` names one, `excerpt` shows one.
 *
 * @example
 * messageRun([sys, plan, ok, ask], [sys, ask], 1, same, roleOf, show)?.text // 'messages 1-2 (user, assistant) are new: …'
 */
export function messageRun(req: unknown[], rec: unknown[], d: number, same: (a: unknown, b: unknown) => boolean, role: (m: unknown) => string, excerpt: (m: unknown) => string): MissDifference | undefined {
  const run = (a: unknown[], b: unknown[]) => {
    for (let k = 1; k <= 4 && d + k < a.length; k++) if (same(a[d + k], b[d])) return k;
    return 0;
  };
  const putIn = run(req, rec);
  const takenOut = run(rec, req);
  // Two tool results swapped: the miss's own case, with a note on why (./tool-order-hint.ts).
  if (putIn === 1 && takenOut === 1 && role(req[d]) === 'tool' && role(req[d + 1]) === 'tool') {
    return { kind: 'message', text: `messages ${d} and ${d + 1} (tool) are swapped: the closest recording has them in the other order${TOOL_ORDER_HINT}`, lines: [] };
  }
  // One message either way (and a swap) is the miss's own case.
  if (putIn === 1 || takenOut === 1) return undefined;
  const roles = (of: unknown[], k: number) => of.slice(d, d + k).map(role).join(', ');
  if (putIn > 1 && (takenOut === 0 || putIn < takenOut)) {
    return { kind: 'message', text: `messages ${d}-${d + putIn - 1} (${roles(req, putIn)}) are new: the closest recording goes on without them`, lines: [`  request:   ${excerpt(req[d])}`] };
  }
  if (takenOut > 1 && (putIn === 0 || takenOut < putIn)) {
    return { kind: 'message', text: `messages ${d}-${d + takenOut - 1} of the closest recording (${roles(rec, takenOut)}) are missing from the request`, lines: [`  recording: ${excerpt(rec[d])}`] };
  }
  return undefined;
}
