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
 */
import { AsyncResource } from 'node:async_hooks';
import { TapedeckError } from '../errors.ts';
import type { ReplayCache } from './replay-cache.ts';

type Obj = Record<string, unknown>;

/** What the AI SDK gives a middleware's wrapGenerate / wrapStream (LanguageModelV2 / V3). */
interface WrapArgs<R> {
  doGenerate: () => PromiseLike<R>;
  doStream: () => PromiseLike<R>;
  params: Obj;
  model: { modelId: string };
}

/** The middleware: pass it as `middleware` to the AI SDK's `wrapLanguageModel`. */
export interface ReplayCacheMiddleware {
  specificationVersion: 'v3';
  wrapGenerate(args: WrapArgs<unknown>): Promise<unknown>;
  wrapStream(args: WrapArgs<unknown>): Promise<unknown>;
}

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A `wrapLanguageModel` middleware that answers the model's calls from `cache` (a ReplayCache,
 * or a function giving the one to use, e.g. `activeReplayCache` inside `withReplayCache`):
 * replay serves recordings (E_MISS when the call changed), record and update call the model and
 * store what it answered, streamed calls included. A stream is stored once it ended, before its
 * end reaches the caller; a stream that failed or carried an error part is not stored.
 *
 * @example
 * import { wrapLanguageModel, streamText } from 'ai'
 * import { ReplayCache, replayCacheMiddleware } from 'llm-tapedeck/store'
 * const cache = await ReplayCache.open('tapes/ai.tape')
 * const model = wrapLanguageModel({ model: openai('gpt-4o-mini'), middleware: replayCacheMiddleware(cache) })
 * const { text } = streamText({ model, prompt: 'Hi' }) // replayed, or recorded in record mode
 */
export function replayCacheMiddleware(cache: ReplayCache | (() => ReplayCache | undefined)): ReplayCacheMiddleware {
  const current = (): ReplayCache => {
    const c = typeof cache === 'function' ? cache() : cache;
    if (c === undefined) {
      throw new TapedeckError('E_ARG', 'replayCacheMiddleware has no ReplayCache: the function given returned none.', {
        hint: 'Call the model inside withReplayCache(path, fn), or pass the cache itself: replayCacheMiddleware(cache).',
      });
    }
    return c;
  };
  return {
    specificationVersion: 'v3',
    async wrapGenerate({ doGenerate, params, model }) {
      const c = current();
      const request = { model: model.modelId, ...params };
      const hit = await c.get(request);
      if (hit !== undefined) return hit;
      const result = await forgoing(c, request, doGenerate);
      await c.put(request, result);
      return result;
    },
    async wrapStream({ doStream, params, model }) {
      const c = current();
      const request = { model: model.modelId, ...params, stream: true };
      const hit = await c.get(request);
      if (hit !== undefined) return replayed(hit, c);
      const result = await forgoing(c, request, doStream);
      if (!isObj(result) || !(result.stream instanceof ReadableStream)) {
        c.forgo(request);
        return result;
      }
      const { stream, ...rest } = result;
      const parts: unknown[] = [];
      let failed = false;
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
            parts.push(r.value);
            out.enqueue(r.value);
            return;
          }
          // Stored before the caller sees the end: nothing is taken as recorded before it is.
          if (failed) forgo();
          else await put();
          out.close();
        },
        cancel(reason) {
          forgo();
          return source.cancel(reason);
        },
      });
      return { ...rest, stream: recorded };
    },
  };
}

/** The model's call; when it throws, no answer will be put: its turn is given up (ReplayCache.forgo), so identical calls asked after it need not wait for it. */
async function forgoing(c: ReplayCache, request: unknown, call: () => PromiseLike<unknown>): Promise<unknown> {
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
