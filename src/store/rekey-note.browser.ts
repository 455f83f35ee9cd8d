/**
 * rekey-note.ts for browser builds: a page says no re-key line. A tape with keys of an older
 * spec replays the same there (its keys are computed again as in Node), and what the line
 * advises, recording the calls again, is done in Node, which says it (once per tape in a
 * process). Leaving the line's words out keeps the page bundle within its budget (bench/size.mjs).
 */
import type { StoreWarning } from './backend.ts';

/**
 * No re-key warning in a page, whatever was keyed again.
 *
 * @example
 * warnings.push(...rekeyNotes('chat.tape', 2)) // pushes nothing
 */
export const rekeyNotes = (_tape: string | undefined, _count: number): StoreWarning[] => [];
