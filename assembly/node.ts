// The wasm export surface of the builds for Node: everything in index.ts, and the request-view
// writer (view.ts), which browser bundles leave out (see scripts/build.mjs).
export * from "./index";
export { view } from "./view";
