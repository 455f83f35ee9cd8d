// The wasm export surface of the builds for Node: everything in index.ts, the structural index
// (tape.ts) and the request-view writer (view.ts) written from it, which browser bundles leave
// out (see scripts/build.mjs).
export * from "./index";
export { index } from "./tape";
export { view } from "./view";

// Embeds the powers-of-five table (assembly/generated/number-tables.ts); without it the loader
// writes the table (the browser's build).
// @ts-ignore: decorator
@global const POW5_EMBEDDED: bool = true;

// String frames in JSON.stringify-marked text (see F_STRINGIFIED in json.ts): the loader writes
// them only to a build that exports valueFrames(), and only where Buffer is.
// @ts-ignore: decorator
@global const VALUE_FRAMES: bool = true;

// Strings in JSON text validated as UTF-8 16 bytes a step (see writeString in json.ts); the
// browser's build checks them sequence by sequence, which keeps its lookup tables and second
// copy loop out of the bundle (its budget is 100 KB gzipped).
// @ts-ignore: decorator
@global const UTF8_STEPS: bool = true;

/** Marks a build that reads string frames (see F_STRINGIFIED in json.ts). */
export function valueFrames(): i32 {
  return 1;
}
