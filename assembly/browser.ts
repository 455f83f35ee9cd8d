// The wasm export surface of the browser's build: index.ts's, less the number routines exported
// on their own (parseNumber, formatNumber, writeCanonicalNumber), which only the differential
// tests call, on the builds for Node (test/number.test.ts). Without them the build is ~0.7 KB
// smaller, within the browser entry's budget of 100 KB gzipped; the canonical writer keeps
// what it uses of them.
export { result, canonical, digests, pow5Table, prepare, MAX_DEPTH, sha256, sha256Init, sha256Update, sha256Final, sha256Many, pathChain, traceToken, utf16ToUtf8 } from "./index";
