// The wasm export surface. Both builds (scalar and SIMD) export exactly these names.
export { parseNumber, formatNumber, writeCanonicalNumber } from "./number";
export { sha256, sha256Init, sha256Update, sha256Final, sha256Many, pathChain } from "./sha256";
