// The Vercel AI SDK as the tree reads it: a ReplayCache around `wrapLanguageModel` (docs/api.md)
// records the model's call options (`{ model, prompt, tools?, ... }`, LanguageModelV2/V3) as the
// request and the `doGenerate()` result (`{ content: [parts], finishReason, usage, ... }`) as the
// value. The next call of the conversation (generateText with the answer in `messages`, or the
// next step of a tool loop) sends the answer back inside `prompt`, turned into an assistant
// message by the AI SDK (ai 6: toResponseMessages, then convertToLanguageModelPrompt). The tree
// must build that same message and put it where the AI SDK puts it, at the end of `prompt`, or
// the answer's hash matches nothing the follow-up sends (the chat family's default appends to
// `messages`, which the normalizer reads before `prompt`: the answer landed before the question).

import { TapedeckError } from '../errors.ts';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Whether a request is AI SDK call options: a `prompt` (a message list, or a string) where the
 * conversation is kept.
 *
 * @example
 * isAiSdkCallOptions({ model: 'gpt-4o-mini', prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }) // true
 */
export function isAiSdkCallOptions(request: unknown): request is Obj {
  return isObj(request) && (Array.isArray(request.prompt) || typeof request.prompt === 'string');
}

/**
 * The call options that continue the conversation with `more` appended to `prompt`, where the
 * AI SDK sends an answer back (a string prompt is the one user message it stands for).
 *
 * @example
 * continueAiSdk({ model: 'm', prompt: 'hi' }, [{ role: 'assistant', content: [{ type: 'text', text: 'hello' }] }]).prompt
 * // [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'text', text: 'hello' }] }]
 */
export function continueAiSdk(request: Obj, more: readonly unknown[]): Obj {
  const prompt = typeof request.prompt === 'string' ? [{ role: 'user', content: request.prompt }] : (request.prompt as unknown[]);
  return { ...request, prompt: [...prompt, ...more] };
}

/**
 * Whether a value is a `doGenerate()` result of an AI SDK language model (V2: AI SDK 5, V3:
 * AI SDK 6): a `content` list of typed parts and a `finishReason` (a string in V2,
 * `{ unified, raw }` in V3). An Anthropic message also has a `content` list, but no
 * `finishReason` (its own is `stop_reason`).
 */
export function isAiSdkResult(value: unknown): value is Obj & { content: unknown[] } {
  if (!isObj(value) || !Array.isArray(value.content) || value.type === 'message' || 'role' in value) return false;
  const f = value.finishReason;
  return typeof f === 'string' || (isObj(f) && typeof f.unified === 'string');
}

/** A tool call's input as the AI SDK sends it back: parsed JSON; `{}` when empty or not JSON. */
function parsedInput(input: unknown): unknown {
  if (typeof input !== 'string') return input ?? {};
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input);
  } catch {
    // An invalid tool call goes back with empty input (ai 6, toResponseMessages).
    return {};
  }
}

/** `providerOptions: providerMetadata`, as the AI SDK carries a part's metadata back. */
function withOptions(out: Obj, part: Obj): Obj {
  if (part.providerMetadata !== undefined && part.providerMetadata !== null) out.providerOptions = part.providerMetadata;
  return out;
}

function unread(why: string): TapedeckError {
  return new TapedeckError('E_TREE', `The recorded value is an AI SDK doGenerate() result with ${why}, which the tree does not read.`, {
    hint: 'The record still replays; only the tree cannot show its answer.',
  });
}

/**
 * The assistant message a `doGenerate()` result stands for in the next call's `prompt`: text,
 * reasoning and file parts, tool calls with their input parsed, provider-executed tool results;
 * sources and approval requests are left out, as the AI SDK leaves them out. Throws `E_TREE` for
 * a part of a kind it does not know (so the tree lists the record instead of showing a guess).
 *
 * @example
 * aiSdkAnswer({ content: [{ type: 'text', text: 'Paris.' }], finishReason: 'stop', usage: {} })
 * // { role: 'assistant', content: [{ type: 'text', text: 'Paris.' }] }
 */
export function aiSdkAnswer(result: Obj & { content: unknown[] }): Obj {
  const content: Obj[] = [];
  result.content.forEach((part, i) => {
    if (!isObj(part) || typeof part.type !== 'string') throw unread(`content[${i}] not a typed part`);
    switch (part.type) {
      case 'text':
        if (typeof part.text !== 'string') throw unread(`a text part (content[${i}]) without text`);
        // Empty text goes nowhere.
        if (part.text !== '') content.push(withOptions({ type: 'text', text: part.text }, part));
        return;
      case 'reasoning':
        if (typeof part.text !== 'string') throw unread(`a reasoning part (content[${i}]) without text`);
        content.push(withOptions({ type: 'reasoning', text: part.text }, part));
        return;
      case 'file':
        content.push(withOptions({ type: 'file', data: part.data, mediaType: part.mediaType }, part));
        return;
      case 'tool-call': {
        const call: Obj = { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: parsedInput(part.input) };
        if (part.providerExecuted !== undefined && part.providerExecuted !== null) call.providerExecuted = part.providerExecuted;
        content.push(withOptions(call, part));
        return;
      }
      case 'tool-result': {
        // Only a tool the provider ran answers inside the model's result; the AI SDK sends it
        // back in the assistant message, as its tool model output (without a toModelOutput).
        const result = part.result === undefined ? null : part.result;
        const output = part.isError === true ? { type: 'error-json', value: result } : typeof result === 'string' ? { type: 'text', value: result } : { type: 'json', value: result };
        content.push(withOptions({ type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output }, part));
        return;
      }
      case 'source':
      case 'tool-approval-request':
        // Not sent back: sources are metadata, approvals are answered in a tool message.
        return;
      default:
        throw unread(`a part of type ${JSON.stringify(part.type)} (content[${i}])`);
    }
  });
  return { role: 'assistant', content };
}

/**
 * Whether a value is a streamed call as replayCacheMiddleware stores it (src/store/ai-sdk-cache.ts):
 * `{ stream: [parts] }`, the parts of a `doStream()` stream, typed, with its `finish` part.
 */
export function isAiSdkStream(value: unknown): value is Obj & { stream: Obj[] } {
  if (!isObj(value) || !Array.isArray(value.stream) || value.stream.length === 0) return false;
  return value.stream.every((p) => isObj(p) && typeof p.type === 'string') && value.stream.some((p) => (p as Obj).type === 'finish');
}

/**
 * The `doGenerate()`-shaped result a recorded stream stands for: its text and reasoning deltas
 * joined per block (in the order the blocks started), its tool calls, files and provider tool
 * results in stream order, and the finish reason. Parts that carry no answer (stream-start,
 * response-metadata, tool input deltas, raw chunks) are left out, as the AI SDK leaves them out
 * of the message it sends back.
 *
 * @example
 * aiSdkStreamResult({ stream: [{ type: 'text-start', id: '0' }, { type: 'text-delta', id: '0', delta: 'Paris' }, { type: 'text-end', id: '0' }, { type: 'finish', finishReason: 'stop' }] })
 * // { content: [{ type: 'text', text: 'Paris' }], finishReason: 'stop' }
 */
export function aiSdkStreamResult(value: Obj & { stream: Obj[] }): Obj & { content: unknown[] } {
  const content: Obj[] = [];
  // Text and reasoning blocks by id: deltas go to the block they name.
  const open = new Map<string, Obj>();
  let finishReason: unknown;
  for (const part of value.stream) {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start': {
        const block: Obj = { type: part.type === 'text-start' ? 'text' : 'reasoning', text: '' };
        if (part.providerMetadata !== undefined) block.providerMetadata = part.providerMetadata;
        open.set(`${block.type}:${String(part.id)}`, block);
        content.push(block);
        break;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = part.type === 'text-delta' ? 'text' : 'reasoning';
        let block = open.get(`${kind}:${String(part.id)}`);
        if (block === undefined) {
          // A delta with no start (an older stream shape): a block of its own.
          block = { type: kind, text: '' };
          open.set(`${kind}:${String(part.id)}`, block);
          content.push(block);
        }
        block.text = `${String(block.text)}${typeof part.delta === 'string' ? part.delta : ''}`;
        break;
      }
      case 'tool-call':
      case 'tool-result':
      case 'file':
        content.push(part);
        break;
      case 'finish':
        finishReason = part.finishReason;
        break;
      default:
        break;
    }
  }
  return { content, finishReason };
}
