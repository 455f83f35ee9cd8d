/**
 * The scalar WebAssembly build, on demand. Browser bundles embed only the SIMD build (every
 * current browser runs it; see src/core/wasm-scalar.browser.ts); a page that wants the scalar
 * backend too (an old engine without SIMD, or a test comparing backends) loads it by URL.
 */
import { provideWasmBuild } from '../core/wasm.ts';
import { bytesOf, type ByteSource } from './source.ts';

/**
 * Loads a WebAssembly build the bundle does not embed; then setBackend(name) can use it. The
 * bytes must be this version's build for pages (its SHA-256 is checked): serve
 * `dist/wasm/tapedeck.wasm` ('wasm') or `dist/wasm/tapedeck-simd-browser.wasm` ('wasm-simd') from
 * the installed package. A download that fails is E_BACKEND, with the URL and the HTTP status.
 *
 * @example
 * import { loadWasmBuild, setBackend } from 'llm-tapedeck/browser'
 * await loadWasmBuild('wasm', '/assets/tapedeck.wasm')
 * setBackend('wasm')
 */
export async function loadWasmBuild(name: 'wasm' | 'wasm-simd', source: ByteSource): Promise<void> {
  // A build that cannot be downloaded is a backend that cannot run (E_BACKEND), not a missing tape.
  const { bytes } = await bytesOf(source, 'WebAssembly build', 'E_BACKEND');
  provideWasmBuild(name, bytes);
}
