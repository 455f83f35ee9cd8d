/**
 * The Vercel AI SDK's language-model middleware over a ReplayCache: `generateText` (doGenerate)
 * and `streamText` (doStream) alike. A middleware with only `wrapGenerate` leaves `doStream`
 * unwrapped, so a streamed call went to the live API in replay mode with no miss and no warning:
 * a test suite passed while calling the real API. Plain objects, no import of `ai`: the package
 * is the user's.
 *
 * A streamed call is keyed as its call options plus `stream: true` (a streamed recording never
 * answers `generateText`, nor the other way round) and stored as `{ stream: [parts], ...rest }`:
 * every part the model's stream gave, in order, with the rest of the doStream() result
 * (request and response metadata). Its replay is a stream of the same parts.
 *
 * The request is keyed by the model id, and stored with the model's provider beside it
 * (`model: { modelId, provider }`, which keys as the model id alone): recordings made before the
 * provider was stored key alike and are still served, and a recording that names another
 * provider (`openai.chat` for `anthropic.messages` or `openai.responses` with the same model
 * id) is never served: that call is a miss.
 */
import { AsyncResource } from 'node:async_hooks';
import { TapedeckError } from '../errors.ts';
import { missHeadline, recordHow } from '../match/diagnose.ts';
import { cacheMiss, type ReplayCache, type ReplayRecord } from './replay-cache.ts';

type Obj = Record<string, unknown>;

/**
 * What the AI SDK gives a middleware's wrapGenerate / wrapStream (LanguageModelV2 / V3): `G` is
 * what the model's doGenerate() gives, `S` what its doStream() gives.
 */
interface WrapArgs<G, S> {
  doGenerate: () => PromiseLike<G>;
  doStream: () => PromiseLike<S>;
  params: Obj;
  model: { modelId: string; provider?: string };
}

/**
 * The middleware: pass it as `middleware` to the AI SDK's `wrapLanguageModel`. Its methods are
 * generic in the model's results, not typed with the AI SDK's own (this package does not import
 * `@ai-sdk/provider`, the user's): `wrapLanguageModel` then reads them as returning its
 * `LanguageModelV3GenerateResult` / `LanguageModelV3StreamResult`, which `Promise<unknown>` could
 * not be assigned to in a strict project. What they give is what the model gave (or gave when
 * it was recorded).
 */
export interface ReplayCacheMiddleware {
  specificationVersion: 'v3';
  wrapGenerate<G, S>(args: WrapArgs<G, S>): Promise<G>;
  wrapStream<G, S>(args: WrapArgs<G, S>): Promise<S>;
}

type Model = WrapArgs<unknown, unknown>['model'];

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What the middleware calls on a cache: a ReplayCache, or an object that answers like one. */
const isCache = (v: unknown): v is ReplayCache =>
  v !== null && typeof v === 'object' && typeof (v as Obj).getRecord === 'function' && typeof (v as Obj).put === 'function' && typeof (v as Obj).forgo === 'function';

const HOW = 'Pass the cache itself, opened: replayCacheMiddleware(await ReplayCache.open(path)), or a function giving it (activeReplayCache).';

/**
 * The E_ARG for a value that is no ReplayCache, said when it is given (a forgotten await, a
 * path) rather than as a bare TypeError at the first model call. `from`: where it came from.
 */
function notACache(v: unknown, from: string): TapedeckError {
  if (v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function') {
    return new TapedeckError('E_ARG', `replayCacheMiddleware: ${from} is a Promise, not a ReplayCache: did you forget await?`, {
      hint: 'ReplayCache.open is async: const cache = await ReplayCache.open(path), then replayCacheMiddleware(cache).',
    });
  }
  if (typeof v === 'string') {
    return new TapedeckError('E_ARG', `replayCacheMiddleware: ${from} is a string (${JSON.stringify(v.length > 80 ? `${v.slice(0, 79)}…` : v)}), not a ReplayCache.`, { hint: HOW });
  }
  const kind = v === null ? 'null' : Array.isArray(v) ? 'an array' : v === undefined ? 'undefined' : typeof v === 'object' ? 'an object without get/put/forgo' : `a ${typeof v}`;
  return new TapedeckError('E_ARG', `replayCacheMiddleware: ${from} is ${kind}, not a ReplayCache.`, { hint: HOW });
}

/** The model as a request holds it: `{ modelId, provider }` (keyed as the model id), or the model id when it names no provider. */
const modelOf = (model: Model): unknown => (typeof model.provider === 'string' ? { modelId: model.modelId, provider: model.provider } : model.modelId);

/** The provider a recording was made for; undefined for one made before providers were stored. */
function recordedProvider(rec: ReplayRecord): string | undefined {
  const m = isObj(rec.request) ? rec.request.model : undefined;
  return isObj(m) && typeof m.provider === 'string' ? m.provider : undefined;
}

/**
 * The recorded value, when the recording was made for this model's provider (or before
 * providers were stored). One made for another provider would be a wrong answer (another API's
 * content, its providerMetadata): an E_MISS in every mode. Update mode included: it adds
 * recordings but never replaces one, and an answer appended after this one would never be
 * reached (a call is served its key's recordings in order).
 */
function served(rec: ReplayRecord, model: Model, c: ReplayCache, request: Obj): unknown {
  const recorded = recordedProvider(rec);
  if (recorded === undefined || typeof model.provider !== 'string' || recorded === model.provider) return rec.value;
  const how = recordHow({ kind: 'cache', modeFromOption: c.modeSource === 'option' });
  const fix = c.mode === 'update' ? `${how} (update mode adds recordings but never replaces one)` : how;
  // The providers first: a headline is clipped at its end, where the tape's path stands.
  const difference = `recorded for provider ${recorded}, and this model is ${model.provider} (model id ${model.modelId}, tape ${c.path})`;
  throw cacheMiss(missHeadline(difference, fix), fix, {
    file: c.path,
    key: c.cacheKey(request),
    model: model.modelId,
    provider: model.provider,
    recordedProvider: recorded,
    kind: 'provider',
    difference,
    fix,
  });
}

/**
 * Refuses (E_MISS) a call whose next recording was made for another provider, before the call
 * is counted: the recording keeps its turn for the model it was made for (a fallback that asks
 * another provider's model first must not use it up).
 */
async function refuseOtherProvider(c: ReplayCache, request: Obj, model: Model): Promise<void> {
  const next = await c.peek(request);
  if (next !== undefined) served(next, model, c, request);
}

/**
 * A `wrapLanguageModel` middleware that answers the model's calls from `cache` (a ReplayCache,
 * or a function giving the one to use, e.g. `activeReplayCache` inside `withReplayCache`):
 * replay serves recordings (E_MISS when the call changed), record and update call the model and
 * store what it answered, streamed calls included. A stream is stored once it ended, before its
 * end reaches the caller; a stream that failed or carried an error part is not stored, nor one
 * whose finish part has no finish reason from the provider (its upstream cut it short: a
 * warning says so). A
 * recording made for another provider's model with the same model id is never served (E_MISS);
 * one made before providers were stored is served as it always was. Anything but a cache (a
 * path, a Promise from a forgotten await) is an E_ARG here, when the middleware is made.
 *
 * @example
 * import { wrapLanguageModel, streamText } from 'ai'
 * import { ReplayCache, replayCacheMiddleware } from 'llm-tapedeck/store'
 * const cache = await ReplayCache.open('tapes/ai.tape')
 * const model = wrapLanguageModel({ model: openai('gpt-4o-mini'), middleware: replayCacheMiddleware(cache) })
 * const { text } = streamText({ model, prompt: 'Hi' }) // replayed, or recorded in record mode
 */
export function replayCacheMiddleware(cache: ReplayCache | (() => ReplayCache | undefined)): ReplayCacheMiddleware {
  // Said here, where the middleware is made, not as a TypeError at the first model call.
  if (typeof cache !== 'function' && !isCache(cache)) throw notACache(cache, 'the argument');
  const current = (): ReplayCache => {
    if (typeof cache !== 'function') return cache;
    const c: unknown = cache();
    if (c === undefined) {
      throw new TapedeckError('E_ARG', 'replayCacheMiddleware has no ReplayCache: the function given returned none.', {
        hint: 'Call the model inside withReplayCache(path, fn), or pass the cache itself: replayCacheMiddleware(cache).',
      });
    }
    if (!isCache(c)) throw notACache(c, 'what the function given returned');
    return c;
  };
  const warned = new Set<string>();
  return {
    specificationVersion: 'v3',
    async wrapGenerate<G, S>({ doGenerate, params, model }: WrapArgs<G, S>): Promise<G> {
      const c = current();
      abortedAlready(params);
      const request = { model: modelOf(model), ...params };
      await refuseOtherProvider(c, request, model);
      const hit = await c.getRecord(request);
      // A recording is what this call's doGenerate() gave when it was recorded.
      if (hit !== undefined) return served(hit, model, c, request) as G;
      const result = await forgoing(c, request, doGenerate);
      await c.put(request, result);
      return result;
    },
    async wrapStream<G, S>({ doStream, params, model }: WrapArgs<G, S>): Promise<S> {
      const c = current();
      abortedAlready(params);
      const request = { model: modelOf(model), ...params, stream: true };
      await refuseOtherProvider(c, request, model);
      const hit = await c.getRecord(request);
      // The recorded parts as a stream again: what doStream() gave when it was recorded.
      if (hit !== undefined) return replayed(served(hit, model, c, request), c) as S;
      const result = await forgoing(c, request, doStream);
      if (!isObj(result) || !(result.stream instanceof ReadableStream)) {
        c.forgo(request);
        return result;
      }
      const { stream, ...rest } = result;
      const parts: unknown[] = [];
      let failed = false;
      // Whether the finish part came without the provider's finish reason: the stream just ended.
      let cutShort = false;
      // The turn this call's get took is in this async context; the stream's reader calls back
      // from its own, so the put and the give-up run bound to this one.
      const put = AsyncResource.bind(() => c.put(request, { ...rest, stream: parts }));
      const forgo = AsyncResource.bind(() => c.forgo(request));
      const source = (stream as ReadableStream<unknown>).getReader();
      // Read part by part rather than piped through a TransformStream: a stream that errors or
      // that its reader cancels is seen here, and its turn given up (nothing will be put).
      const recorded = new ReadableStream<unknown>({
        async pull(out) {
          let r: Awaited<ReturnType<typeof source.read>>;
          try {
            r = await source.read();
          } catch (e) {
            forgo();
            out.error(e);
            return;
          }
          if (!r.done) {
            if (isObj(r.value) && r.value.type === 'error') failed = true;
            if (isObj(r.value) && r.value.type === 'finish') cutShort = noProviderFinish(r.value.finishReason);
            parts.push(r.value);
            out.enqueue(r.value);
            return;
          }
          // Stored before the caller sees the end: nothing is taken as recorded before it is.
          if (failed) forgo();
          else if (cutShort) {
            forgo();
            warnCut(model, warned);
          } else await put();
          out.close();
        },
        cancel(reason) {
          forgo();
          return source.cancel(reason);
        },
      });
      return { ...rest, stream: recorded } as S;
    },
  };
}

/**
 * Throws the abort's reason for a call whose `abortSignal` was aborted before it was made, as the
 * model's own fetch rejects it live: in record mode such a call stores nothing, so in replay it
 * must not take (use up) a recording either, which shifted every later identical call's answer
 * by one and gave the aborted call an answer.
 */
function abortedAlready(params: Obj): void {
  const signal = params.abortSignal;
  if (signal instanceof AbortSignal && signal.aborted) throw signal.reason;
}

/**
 * Whether a stream's finish part says the provider gave no finish reason: the AI SDK's
 * providers end the model's stream with a finish part whatever happened, and when the
 * upstream's stream just ended (no finish_reason, no `[DONE]`, no `message_stop`) its reason is
 * `{ unified: 'other', raw: undefined }` (LanguageModelV3), `'unknown'` (V2). Stored, that short
 * answer would replay as the model's whole answer.
 */
function noProviderFinish(reason: unknown): boolean {
  if (reason === 'unknown') return true;
  return isObj(reason) && reason.unified === 'other' && reason.raw === undefined;
}

/**
 * Says that a stream cut short was not stored, as createFetch and the proxy say of theirs: once
 * per model for each middleware (`warned`: what it said already).
 */
function warnCut(model: Model, warned: Set<string>): void {
  const name = typeof model.provider === 'string' ? `${model.provider} ${model.modelId}` : model.modelId;
  const message = `tapedeck: replayCacheMiddleware: the stream of ${name} ended without a finish reason from the provider (its upstream cut it short); not recorded.`;
  if (warned.has(message)) return;
  warned.add(message);
  process.emitWarning(message, { code: 'TAPEDECK_STREAM_CUT' });
}

/** The model's call; when it throws, no answer will be put: its turn is given up (ReplayCache.forgo), so identical calls asked after it need not wait for it. */
async function forgoing<T>(c: ReplayCache, request: unknown, call: () => PromiseLike<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    c.forgo(request);
    throw e;
  }
}

/** A recorded stream value as doStream() gives it: its parts as a stream again. */
function replayed(value: unknown, c: ReplayCache): unknown {
  if (!isObj(value) || !Array.isArray(value.stream)) {
    throw new TapedeckError('E_RECORDING', `The recording of this streamed call in ${c.path} is not a recorded stream (no \`stream\` list of parts).`, {
      hint: 'Record it again through replayCacheMiddleware: TAPEDECK_MODE=record.',
    });
  }
  const { stream, ...rest } = value;
  const parts = stream as unknown[];
  return {
    ...rest,
    stream: new ReadableStream<unknown>({
      start(out) {
        for (const p of parts) out.enqueue(p);
        out.close();
      },
    }),
  };
}
