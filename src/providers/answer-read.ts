/**
 * Pieces the modules' answer readers share (./provider.ts, `readAnswer`): each module reads its
 * own answers; these are the few steps that are the same in every shape.
 */
import type { AnswerRead } from './provider.ts';

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A number member, or undefined. */
export const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Tool arguments sent as JSON text, parsed; anything else as it is. */
export function parseArgs(s: unknown): unknown {
  if (typeof s !== 'string') return s;
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

/** The text of a content member: a string, or the `text` of each part, joined. */
export function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

/**
 * A reading to fill in, of the given shape.
 *
 * @example
 * const r = newRead('gemini'); r.texts.push('hi')
 */
export function newRead(shape: string): AnswerRead {
  return { shape, texts: [], toolCalls: [], finish: [], refusal: '', usage: undefined, rest: undefined };
}

/**
 * The reading of an answer with no text of its own (embeddings, token counts): its members are
 * its content, its usage is counted.
 *
 * @example
 * envelopeRead(body, { input: 8, output: 0 }, 'text-embedding-3-small')
 */
export function envelopeRead(body: Obj, usage: AnswerRead['usage'], model?: string): AnswerRead {
  return { ...newRead('json'), usage, rest: body, ...(model !== undefined ? { model } : {}) };
}

/** The model an answer names in `model`, when it is a string. */
export const modelOf = (body: Obj): string | undefined => (typeof body.model === 'string' ? body.model : undefined);

/**
 * The shape of a value without its values: objects keep their members and arrays their items,
 * strings read '', numbers 0, booleans false, null stays null. A reader that moves content into
 * `other` (where each value is compared) leaves this in `rest`, so a member added, removed or of
 * another type is still a change of structure, and a new value is not also called noise there.
 *
 * @example
 * shapeOnly({ transcript: 'hi', expires_at: 1, tags: ['a'] }) // { transcript: '', expires_at: 0, tags: [''] }
 */
export function shapeOnly(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shapeOnly);
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shapeOnly(x)]));
  if (typeof v === 'string') return '';
  if (typeof v === 'number') return 0;
  if (typeof v === 'boolean') return false;
  return v;
}

/**
 * Whether a part holds anything besides its `type`: a member that is not null and not an empty
 * list. A text part with no citations holds nothing more than its text, so it adds no entry to
 * `other`, and text split into parts in another way reads the same.
 *
 * @example
 * holdsMore({ type: 'text', citations: null }) // false
 * holdsMore({ type: 'output_text', annotations: [{ type: 'url_citation', url: 'https://example.org' }] }) // true
 */
export function holdsMore(part: Obj): boolean {
  return Object.entries(part).some(([k, v]) => k !== 'type' && v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0));
}
