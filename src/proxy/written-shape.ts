/**
 * Whether a hand-written answer has the shape its request asks for (docs/hand-written.md): a
 * stream for a streamed call, one body for a plain one, a stream in its provider's format and
 * framing (Gemini's JSON array without `?alt=sse`) with the end its provider gives it, and every
 * piece of it JSON (written-framing.ts). An answer of the wrong shape is replayed as written and read
 * wrong without a word: the OpenAI SDK takes an event stream sent to a plain call for the
 * completion's text, reads no chunk from a JSON body sent to a streamed call, and takes a stream
 * with no end, or another provider's events, for a whole answer.
 *
 * What the request asks is read as its key reads it (the provider modules: `stream: true` in
 * the view, Ollama's default stream, a route that streams such as Gemini's
 * `:streamGenerateContent` or Bedrock's `converse-stream`); whether a stream is whole is judged
 * as a live one is before it is recorded (answerVerdict, docs/modes.md rule 11); whether it is in
 * the provider's format, by the route's module reading the answer it assembles to. Only answers
 * of a 2xx status to a provider's route are judged: an API answers an error as JSON even to a
 * streamed call (a 429 written for a stream is right), and the other routes' answers are the
 * user's own.
 */
import { ANSWER_READERS } from '../providers/answer-readers.ts';
import { answerVerdict } from '../providers/answer-verdict.ts';
import { assembleAnswer, isTelemetry, normalizeRequest, routeOf, type RouteMatch, type RouteRequest } from '../providers/index.ts';
import type { HttpRecord } from '../store/records.ts';
import { unparsedPiece, type StreamFraming } from './written-framing.ts';

/** What is wrong with a hand-written answer's shape: what to say, and the fix. */
export interface ShapeProblem {
  what: string;
  hint: string;
}

/** How an answer was written: with `events` (else a `body`), and whether it is marked `cut`. */
export interface WrittenAnswer {
  events: boolean;
  cut: boolean;
  /** The events as written (`event` name and `data`), for the checks of each event. */
  list?: readonly { event?: unknown; data: unknown }[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

// Content types whose answer a client reads as a stream (src/proxy/upstream.ts, STREAM_TYPES):
// a `body` written with one of them is a stream written as text (Ollama's NDJSON lines).
const STREAM_TYPES = new Set(['text/event-stream', 'application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonlines', 'application/vnd.amazon.eventstream']);
const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonlines']);
const mimeOf = (ct: string | string[] | undefined): string | undefined => (Array.isArray(ct) ? ct[0] : ct)?.split(';')[0]?.trim().toLowerCase();

/** The provider's name as its users know it, for the messages. */
const NAMES: Readonly<Record<string, string>> = { openai: 'OpenAI', azure: 'Azure OpenAI', anthropic: 'Anthropic', gemini: 'Gemini', bedrock: 'Bedrock', ollama: 'Ollama' };

/**
 * Whether the request asks for Gemini's JSON-array stream: `:streamGenerateContent` without
 * `?alt=sse` is answered with one JSON array sent piece by piece (docs/providers.md), which its
 * client reads as JSON, not as server-sent events.
 */
const isArrayStream = (route: RouteMatch): boolean => route.provider.name === 'gemini' && route.route.streams === true && route.query.get('alt') !== 'sse';

/** How Gemini's JSON-array stream is written by hand: the chunks as one array in "body". */
const ARRAY_WRITE = 'Write the chunks as one JSON array in "body": [{ "candidates": [{ "content": { "role": "model", "parts": [{ "text": "..." }] } }] }, ...], the last with "finishReason": "STOP" in its candidate';

/**
 * How a stream of the route's provider is written by hand and how it ends, for the hints: what
 * the user writes, in the user's terms. The modules judge the bytes; this only says it.
 */
function streamHowTo(route: RouteMatch): { end: string; write: string } {
  const op = route.route.operation;
  if (isArrayStream(route)) return { end: 'a chunk whose candidate has a `finishReason`', write: `${ARRAY_WRITE} (Gemini answers \`:streamGenerateContent\` without \`?alt=sse\` with one JSON array)` };
  switch (route.provider.name) {
    case 'anthropic':
      return {
        end: 'a `message_stop` event',
        write: 'Write Anthropic\'s events: { "event": "message_start", "data": { "type": "message_start", "message": { ... } } }, content_block_start / content_block_delta / content_block_stop, message_delta, and last { "event": "message_stop", "data": { "type": "message_stop" } }',
      };
    case 'gemini':
      return {
        end: 'a chunk whose candidate has a `finishReason`',
        write: 'Write Gemini\'s chunks as events: { "data": { "candidates": [{ "content": { "role": "model", "parts": [{ "text": "..." }] } }] } }, the last with "finishReason": "STOP" in its candidate (no "[DONE]")',
      };
    case 'ollama':
      return {
        end: 'a line with `"done": true`',
        write: 'Ollama streams lines of JSON (NDJSON), not server-sent events: write them as text, "headers": { "content-type": "application/x-ndjson" }, "body": "{\\"message\\":{\\"role\\":\\"assistant\\",\\"content\\":\\"Hi\\"},\\"done\\":false}\\n{\\"message\\":{\\"role\\":\\"assistant\\",\\"content\\":\\"\\"},\\"done\\":true}\\n"',
      };
    case 'bedrock':
      return {
        end: 'a `messageStop` event (ConverseStream) or a `message_stop` chunk (InvokeModelWithResponseStream)',
        write: 'Bedrock streams are AWS binary event streams (application/vnd.amazon.eventstream), which a hand-written recording cannot hold: record this call from the API (TAPEDECK_MODE=record), or write the call without streaming (`/converse`, `/invoke`) with a JSON "body"',
      };
    default:
      if (op === 'responses') {
        return {
          end: 'a `response.completed` (or `response.incomplete`) event',
          write: 'Write the Responses API\'s events, each named as its "type": first { "event": "response.created", "data": { "type": "response.created", "response": { "id": "resp_1", "object": "response", "status": "in_progress", "output": [] } } }, then response.output_item.added (the message item, "id": "msg_1"), response.content_part.added, { "event": "response.output_text.delta", "data": { "type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "..." } }, response.output_text.done, response.content_part.done, response.output_item.done, and last { "event": "response.completed", "data": { "type": "response.completed", "response": { "id": "resp_1", "object": "response", "status": "completed", "output": [ ... ] } } }',
        };
      }
      return {
        end: 'a chunk with a `finish_reason`, then `[DONE]`',
        write: 'Write chat completion chunks: first { "data": { "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": { "role": "assistant", "content": "" }, "finish_reason": null }] } }, then ones with "delta": { "content": "..." }, the last with "finish_reason": "stop", then { "data": "[DONE]" }',
      };
  }
}

/** What the request asks, as its key reads it: a stream or not, and where it says so. */
interface Asked {
  route: RouteMatch;
  stream: boolean;
  /** Where the request says it, for the messages: `` `request.body` has "stream": true ``. */
  said: string;
  /** The shape the request is keyed as (`openai-chat`, `openai-responses`, ...). */
  shape: string;
}

/**
 * What a request asks, as its key reads it; undefined for a request no provider route takes
 * (its answer is the user's own: any body, any stream), a telemetry upload, or a body its
 * provider cannot key (the deck keys it as JSON or HTTP; nothing says what answer it wants).
 */
function askedOf(req: RouteRequest, body: unknown): Asked | undefined {
  const route = routeOf(req);
  if (route === undefined || isTelemetry(req)) return undefined;
  let view;
  try {
    view = normalizeRequest(body, { endpoint: req });
  } catch {
    return undefined;
  }
  const name = NAMES[route.provider.name] ?? route.provider.name;
  const op = route.route.operation;
  // A route that streams says so in its URL (Gemini's :streamGenerateContent, Bedrock's
  // converse-stream); the other APIs say it in the body, as the key does (`stream` is in the
  // view only when it asks for a stream: Ollama's absent `stream` is `true` there).
  if (route.route.streams === true) return { route, stream: true, said: `\`request.url\` calls ${name} ${op}, which streams`, shape: view.provider };
  const options = isObj(view.view.options) ? view.view.options : {};
  const stream = options.stream === true;
  const inBody = isObj(body) ? body.stream : undefined;
  let said: string;
  if (stream) said = inBody === undefined ? `\`request.body\` has no "stream": false, and ${name} streams unless told not to` : '`request.body` has "stream": true';
  else if (route.provider.name === 'gemini' || route.provider.name === 'bedrock') said = `\`request.url\` calls ${name} ${op}, which answers once`;
  else said = inBody === false ? '`request.body` has "stream": false' : '`request.body` has no "stream": true';
  return { route, stream, said, shape: view.provider };
}

/** How to make a plain request streamed, for the hint of a stream written for one. */
function streamTheRequest(route: RouteMatch): string {
  switch (route.provider.name) {
    case 'gemini':
      return 'call `:streamGenerateContent?alt=sse` in "request.url"';
    case 'bedrock':
      return 'call `/converse-stream` or `/invoke-with-response-stream` in "request.url" (but see: Bedrock\'s streams cannot be written by hand; record them)';
    case 'ollama':
      return 'leave "stream": false out of "request.body"';
    default:
      return 'add "stream": true to "request.body"';
  }
}

/** How to make a streamed request plain, for the hint of one answer written for a stream. */
function plainTheRequest(route: RouteMatch): string {
  switch (route.provider.name) {
    case 'gemini':
      return 'call `:generateContent` in "request.url"';
    case 'bedrock':
      return 'call `/converse` or `/invoke` in "request.url"';
    case 'ollama':
      return 'add "stream": false to "request.body"';
    default:
      return 'leave "stream": true out of "request.body"';
  }
}

/**
 * The problem with a hand-written answer's shape, or undefined when it has the shape its
 * request asks for (or nothing says which shape that is). `req`: the method and URL (path and
 * query) the recording answers; `body`: the request body as written; `response`: the answer as
 * stored (its bytes and content type); `written`: how it was written.
 *
 * @example
 * answerShapeProblem({ method: 'POST', url: '/v1/chat/completions' }, { model: 'gpt-4o-mini', messages },
 *   stored, { events: true, cut: false })
 * // { what: '`response.events` make the answer a stream (text/event-stream), but the request asks for one answer (`request.body` has no "stream": true): ...',
//   hint: 'Write the answer as "body": { ... }, the JSON OpenAI answers a call that does not stream; or, for a stream, add "stream": true to "request.body".' }
 */
export function answerShapeProblem(req: RouteRequest, body: unknown, response: HttpRecord['response'], written: WrittenAnswer): ShapeProblem | undefined {
  // An error answer is JSON whatever the call asked (a 429 to a streamed call is right), and a
  // 1xx or 3xx has no answer to read.
  if (response.status < 200 || response.status > 299) return undefined;
  const asked = askedOf(req, body);
  if (asked === undefined) return undefined;
  const { route } = asked;
  const name = NAMES[route.provider.name] ?? route.provider.name;
  const ct = response.headers['content-type'];
  const mime = mimeOf(ct);
  const field = written.events ? '`response.events`' : '`response.body`';
  const how = streamHowTo(route);
  const streamed = written.events || (mime !== undefined && STREAM_TYPES.has(mime));

  if (!asked.stream) {
    if (!streamed) return undefined;
    return {
      what: `${written.events ? `${field} make` : '`response.headers["content-type"]` makes'} the answer a stream (${mime}), but the request asks for one answer (${asked.said}): the SDK would read the stream's text where it expects the answer's JSON`,
      hint: `Write the answer as "body": { ... }, the JSON ${name} answers a call that does not stream; or, for a stream, ${streamTheRequest(route)}.`,
    };
  }

  // Gemini's :streamGenerateContent without alt=sse answers one JSON array sent piece by piece:
  // its client parses the array, so events written for it (replayed as server-sent events) are
  // read as broken JSON, and the array is written as the body.
  const arrayStream = isArrayStream(route);
  if (arrayStream && streamed) {
    const kind = mime === 'text/event-stream' ? `server-sent events (${mime})` : `a stream of ${mime}`;
    return {
      what: `${written.events ? `${field} make` : '`response.headers["content-type"]` makes'} the answer ${kind}, but \`request.url\` has no \`?alt=sse\`: Gemini answers \`:streamGenerateContent\` without it with one JSON array sent piece by piece, and its client would not parse the ${written.events ? 'events' : 'stream'}`,
      hint: `${ARRAY_WRITE}; or, for events, add \`?alt=sse\` to "request.url" (as @google/genai and the AI SDK call it).`,
    };
  }
  const text = !streamed ? new TextDecoder().decode(response.body).trimStart() : '';
  if (!streamed && !(arrayStream && text.startsWith('['))) {
    // The array stream written for a call that asks for server-sent events.
    if (route.provider.name === 'gemini' && text.startsWith('[')) {
      return {
        what: '`response.body` is a JSON array, the stream Gemini sends without `?alt=sse`, but `request.url` asks for server-sent events (`?alt=sse`): its client would read no event from it',
        hint: `${how.write}, as "events": [...] instead of "body"; or, for the JSON-array stream, call \`:streamGenerateContent\` without \`?alt=sse\` in "request.url".`,
      };
    }
    const asEvents = route.provider.name === 'ollama' || route.provider.name === 'bedrock' || arrayStream ? '' : ', as "events": [...] instead of "body"';
    return {
      what: `\`response.body\` is one answer, but the request asks for a stream (${asked.said}): the SDK would read no event from it and end the stream empty`,
      hint: `${how.write}${asEvents}; or, for one answer, ${plainTheRequest(route)}.`,
    };
  }

  // Judged as a live stream is before it is recorded (docs/modes.md rule 11).
  const verdict = answerVerdict(req, body, ct, response.body);
  // A stream that carries the API's error event is an error answer, written on purpose.
  if (!verdict.whole && !verdict.cut) return undefined;
  // A piece that is not JSON fails the client where it is, whatever follows it: named, rather
  // than said to be a stream without its end (the verdict cannot tell the two apart). A cut
  // stream is half an answer, not judged past its end (below).
  // (Ollama's and Bedrock's streams are not server-sent events: events written for them are
  // refused below for their format, with the way that works.)
  const sseProvider = route.provider.name !== 'ollama' && route.provider.name !== 'bedrock';
  const framing: StreamFraming | undefined = arrayStream && !streamed ? 'array' : mime !== undefined && NDJSON_TYPES.has(mime) ? 'ndjson' : sseProvider && (written.events || mime === 'text/event-stream') ? 'sse' : undefined;
  const unparsed = framing !== undefined && !written.cut ? unparsedPiece(framing, response.body, written.events) : undefined;
  if (unparsed) {
    const fix =
      framing === 'ndjson'
        ? `Make each line one JSON object (names in double quotes, no trailing comma), one per line. ${how.write}.`
        : framing === 'array'
          ? `Make the body one JSON array (names in double quotes, no trailing comma). ${how.write}; a JSON-array stream cannot be written cut: for a stream that drops, call \`?alt=sse\` and write "events" with "cut": true.`
          : written.events
            ? 'Give the data as a JSON object ("data": { ... }) rather than text, or text that parses as JSON; only OpenAI\'s end, "[DONE]", is text.'
            : 'Make each event\'s data one JSON value (only OpenAI\'s end, "[DONE]", is text), or write the stream as "events": [{ "data": { ... } }, ...].';
    return { what: `${unparsed.said} (${unparsed.error}): ${unparsed.text}; the ${name} client would fail reading it`, hint: fix };
  }
  // Each event as the SDKs read it: a stream that assembles can still be one they read nothing
  // from (a chunk without `delta`, an Anthropic event without its name).
  const inEvents = written.list && framing === 'sse' ? eventsProblem(asked, body, written.list, undefined, how) : undefined;
  if (inEvents) return inEvents;
  // In the provider's format: the route's own module reads the answer the stream assembles to
  // (an Anthropic route does not read an OpenAI completion), and among OpenAI's, a Responses
  // call gets the Responses API's events and a chat call chat chunks. (A stream nothing can
  // judge counts as whole to the verdict; only one that assembles is known to be.)
  const assembled = verdict.whole ? assembleAnswer(req, ct, response.body) : undefined;
  const read = assembled === undefined ? undefined : ANSWER_READERS[route.provider.name]?.(assembled, { route });
  const otherShape = read !== undefined && (read.shape === 'openai-chat' || read.shape === 'openai-responses') && (read.shape === 'openai-responses') !== (asked.shape === 'openai-responses');
  const are = written.events ? 'are' : 'is';
  if (written.cut) {
    // A cut stream is half an answer: nothing assembles it, so its format is not judged; one
    // that ends as a whole answer would be read whole before the drop.
    if (read === undefined || otherShape) return undefined;
    return {
      what: `\`response.cut\` is true, but ${field} end${written.events ? '' : 's'} as a whole ${name} stream does (with ${how.end}): the SDK would read a whole answer before the connection drops, and raise nothing`,
      hint: `Remove the ending (${how.end}) for a stream cut before its end, or leave "cut" out for a whole stream.`,
    };
  }
  // Only events can be cut ("cut" needs "events"): a stream written as a body is not offered it.
  const orCut = written.events ? ', or add "cut": true for a stream whose connection drops after its events' : '';
  // Said as empty before as cut: a stream with no event is cut on the routes that say which end is due.
  if (response.body.length === 0) {
    return {
      what: `${field} ${are} empty: the SDK would read a stream that ends at once, with no answer`,
      hint: route.provider.name === 'bedrock' ? `${how.write}.` : `${how.write}${written.events ? '; or add "cut": true for a stream whose connection drops before its first event' : ''}.`,
    };
  }
  if (!verdict.whole) {
    if (verdict.missing) {
      return {
        what: `${field} ${are} not a whole answer: ${verdict.missing}; replayed, the SDK would take it for one`,
        hint: `Add the usage chunk before the end, { "data": { "object": "chat.completion.chunk", "choices": [], "usage": { "prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7 } } }, then { "data": "[DONE]" }${orCut}.`,
      };
    }
    return {
      what: `${field} ${are} not a whole ${name} stream: ${name} ends one with ${how.end}, and replayed, the SDK would take what is there for the whole answer`,
      hint: route.provider.name === 'bedrock' ? `${how.write}.` : `End it with ${how.end}${orCut}. ${how.write}.`,
    };
  }
  if (read === undefined || otherShape) {
    const kind = route.provider.name === 'openai' || route.provider.name === 'azure' ? ` ${route.route.operation}` : '';
    return {
      what: `${field} ${are} not in ${name}'s${kind} stream format${read !== undefined ? ` (${written.events ? 'they make' : 'it makes'} an ${read.shape} answer)` : ''}: the SDK would read no answer from ${written.events ? 'them' : 'it'}`,
      hint: `${how.write}.`,
    };
  }
  // The end each SDK needs, past the end the verdict asks for.
  return written.list && framing === 'sse' ? eventsProblem(asked, body, written.list, 'end', how) : undefined;
}

// The delta types of Anthropic's content_block_delta events its SDK reads.
const ANTHROPIC_DELTAS = new Set(['text_delta', 'input_json_delta', 'thinking_delta', 'signature_delta', 'citations_delta']);

/**
 * The first event of a hand-written server-sent stream its SDK would misread, or undefined.
 * OpenAI chat: each choice of a chunk carries `delta` (its text in `delta.content`), and a whole
 * stream has a `finish_reason`, ends with `[DONE]`, and has the usage chunk
 * `stream_options.include_usage` asks for (the SDK's final completion needs the first two).
 * Anthropic: each event is named as its `type` (the SDK dispatches on the name), a
 * `content_block_delta` follows the `content_block_start` of its index and has a delta type it
 * reads. Responses: the stream starts with `response.created` and its deltas name their item
 * (`item_id`, `output_index`), as both the OpenAI SDK and the AI SDK require. `end`: only the
 * ending (asked once the stream is known whole; a cut stream is checked event by event only).
 */
function eventsProblem(asked: Asked, body: unknown, list: readonly { event?: unknown; data: unknown }[], end: 'end' | undefined, how: { end: string; write: string }): ShapeProblem | undefined {
  const at = (i: number) => `\`response.events[${i}]`;
  const provider = asked.route.provider.name;
  if (asked.shape === 'openai-chat' && provider !== 'anthropic' && provider !== 'gemini' && provider !== 'bedrock' && provider !== 'ollama') {
    let finished = false;
    let usage = false;
    for (const [i, e] of list.entries()) {
      if (!isObj(e.data) || !Array.isArray(e.data.choices)) {
        if (isObj(e.data) && isObj(e.data.usage)) usage = true;
        continue;
      }
      if (isObj(e.data.usage)) usage = true;
      for (const [j, c] of e.data.choices.entries()) {
        const where = `${at(i)}.data.choices[${j}]`;
        if (!isObj(c)) continue;
        if (typeof c.finish_reason === 'string') finished = true;
        if (end) continue;
        if (!isObj(c.delta)) {
          return {
            what: `${where}\` has no \`delta\`${'message' in c ? ' (it has `message`, the member of a plain answer)' : ''}: chat chunks carry their part of the answer in \`delta\`, and the SDK would read an empty answer`,
            hint: `Write each choice as { "index": 0, "delta": { "content": "..." }, "finish_reason": null }. ${how.write}.`,
          };
        }
        if (c.delta.content === undefined && typeof c.delta.text === 'string') {
          return { what: `${where}.delta\` has \`text\`: chat chunks carry their text in \`delta.content\`, and the SDK would read an empty answer`, hint: `Rename "text" to "content" in the delta. ${how.write}.` };
        }
      }
    }
    if (!end) return undefined;
    const last = list[list.length - 1];
    if (!finished) return { what: '`response.events` have no chunk with a `finish_reason`: the OpenAI SDK\'s final completion fails on it ("missing finish_reason"), and the AI SDK reports the answer as unfinished', hint: `Give the last chunk "finish_reason": "stop" (or "length", "tool_calls"...), then { "data": "[DONE]" }${orCutHint}. ${how.write}.` };
    if (last?.data !== '[DONE]') return { what: '`response.events` do not end with `[DONE]`, the end OpenAI gives every chat stream', hint: `Add { "data": "[DONE]" } as the last event${orCutHint}.` };
    const options = isObj(body) && isObj(body.stream_options) ? body.stream_options : undefined;
    if (options?.include_usage === true && !usage) {
      return {
        what: '`request.body` asks for the usage chunk (`stream_options.include_usage`), but `response.events` have none: the SDK would report no token counts',
        hint: 'Add the usage chunk before [DONE]: { "data": { "object": "chat.completion.chunk", "choices": [], "usage": { "prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7 } } }; or leave stream_options out of the request.',
      };
    }
    return undefined;
  }
  if (end) return undefined;
  if (provider === 'anthropic') {
    const started = new Set<unknown>();
    for (const [i, e] of list.entries()) {
      if (!isObj(e.data) || typeof e.data.type !== 'string') continue;
      const type = e.data.type;
      if (e.event !== type) {
        return {
          what: `${at(i)}.event\` is ${e.event === undefined ? 'missing' : JSON.stringify(e.event)}, but its data is a ${JSON.stringify(type)} event: the Anthropic SDK reads an event by its name, and would skip it`,
          hint: `Name each event as its data's "type": { "event": ${JSON.stringify(type)}, "data": { "type": ${JSON.stringify(type)}, ... } }.`,
        };
      }
      if (type === 'content_block_start') started.add(e.data.index);
      if (type === 'content_block_delta' || type === 'content_block_stop') {
        if (!started.has(e.data.index)) {
          return {
            what: `${at(i)}\` is a ${type} of block ${JSON.stringify(e.data.index)} with no content_block_start of that index before it: the Anthropic SDK fails on it`,
            hint: 'Start each block first: { "event": "content_block_start", "data": { "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } } }.',
          };
        }
        const d = e.data.delta;
        if (type === 'content_block_delta' && (!isObj(d) || typeof d.type !== 'string' || !ANTHROPIC_DELTAS.has(d.type))) {
          return {
            what: `${at(i)}.data.delta.type\` ${isObj(d) ? JSON.stringify(d.type) : 'is missing'}: Anthropic's deltas are "text_delta" (text), "input_json_delta" (tool input) or "thinking_delta", and the SDK would drop this one`,
            hint: 'Write a text delta as "delta": { "type": "text_delta", "text": "..." }.',
          };
        }
      }
    }
    return undefined;
  }
  if (asked.shape === 'openai-responses') {
    const first = list.findIndex((e) => !(isObj(e.data) && e.data.type === 'keepalive'));
    const f = list[first];
    if (f && isObj(f.data) && f.data.type !== 'response.created' && typeof f.data.type === 'string') {
      return { what: `${at(first)}\` is a ${JSON.stringify(f.data.type)} event, but a Responses stream starts with \`response.created\`: the OpenAI SDK fails without it`, hint: `${how.write}.` };
    }
    for (const [i, e] of list.entries()) {
      if (!isObj(e.data) || typeof e.data.type !== 'string' || !/^response\.(output_text|refusal|function_call_arguments|reasoning_summary_text)\.(delta|done)$/.test(e.data.type)) continue;
      if (typeof e.data.item_id !== 'string') return { what: `${at(i)}.data.item_id\` is missing: a ${e.data.type} event names its output item, and the AI SDK refuses one without it`, hint: `${how.write}.` };
      if (typeof e.data.output_index !== 'number') return { what: `${at(i)}.data.output_index\` is missing: a ${e.data.type} event names its output's place`, hint: `${how.write}.` };
    }
  }
  return undefined;
}

const orCutHint = '; or add "cut": true for a stream whose connection drops after its events';
