// What browser bundles get instead of wasm-scalar.generated.ts (package.json "browser" maps one
// to the other): no scalar build. Every current browser validates the SIMD build, which is
// embedded; where one does not, the js backend gives the same results, or the page loads the
// scalar build by URL with loadWasmBuild('wasm', url) from the browser entry. This keeps about
// 25 KB (gzipped) of a build that browsers would never run out of the page.
export const SCALAR_BASE64 = '';
