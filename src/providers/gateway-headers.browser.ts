/**
 * gateway-headers.ts for browser builds: a page files recordings by the provider's own headers
 * only (keyedHeaders, which reads none for a module that has none), so the gateway list stays
 * out of a bundle with a 100 KB budget (bench/size.mjs). A tape recorded through a gateway with a
 * routing header misses in a page rather than answering.
 */
export { keyedHeaders as filedHeaders } from './index.ts';
