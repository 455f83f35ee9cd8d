/**
 * Browser bundles' stand-in for ./fetch-source.ts (package.json "browser"): a page reads a URL
 * with its fetch, and has no disk to read a `file:` URL from.
 *
 * @example
 * const res = await fetchSource('/tapes/chat.tape')
 */
export const fetchSource = (source: string | URL): Promise<Response> => fetch(source);
