/**
 * llm-tapedeck/fetch: the fetch wrapper on its own, where users look for it. `createFetch` records
 * and replays the calls an SDK makes through it (the same engine as `tapedeck serve`, in
 * process); `installFetchSwitch` points `globalThis.fetch` at it for code that takes no fetch
 * option. The same functions as llm-tapedeck/proxy exports (Node; the browser has
 * llm-tapedeck/browser).
 *
 * @example
 * import OpenAI from 'openai'
 * import { createFetch } from 'llm-tapedeck/fetch'
 * const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'replay', fetch: createFetch({ tape: 'tapes/chat.tape' }) })
 */
export { createFetch, type FetchOptions, type TapedeckFetch } from './fetch.ts';
export { installFetchSwitch, type FetchSwitch, type FetchSwitchOptions, type HostPattern } from './global-fetch.ts';
export type { ChaosOptions, FaultName } from '../chaos/options.ts';
