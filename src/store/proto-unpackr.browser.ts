/**
 * proto-unpackr.ts for browser builds: msgpackr's own Unpackr, so the page bundle (a 100 KB budget)
 * carries no extra code. A page replays HTTP answers, which are bytes; a ReplayCache value with a
 * `__proto__` member is read in Node.
 */
export { Unpackr as ProtoUnpackr } from 'msgpackr/unpack';
