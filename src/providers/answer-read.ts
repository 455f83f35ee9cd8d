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
