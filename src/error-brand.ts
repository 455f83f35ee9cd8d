/**
 * The brand that makes `instanceof TapedeckError` hold whichever copy of the library threw the
 * error. A process may hold several copies of src/errors.ts: the CommonJS bundle jest loads
 * (dist/testing/jest.cjs), the Node bundle of the other entries (dist/node/), and the browser
 * entry that a component test under jsdom or happy-dom loads in Node. Each copy marks its
 * prototype with one registered symbol, and `instanceof` asks for that mark rather than for its
 * own prototype. Pages get a stub (error-brand.browser.ts): a page bundles one copy, and its
 * bytes are counted.
 */
const BRAND = Symbol.for('llm-tapedeck.TapedeckError');

/**
 * Marks the instances of `cls` with the brand, and makes `x instanceof cls` true for any
 * branded value. A subclass of `cls` keeps the usual prototype-chain check.
 *
 * @example
 * brand(TapedeckError) // then: errorOfAnotherCopy instanceof TapedeckError === true
 */
export function brand(cls: abstract new (...args: never[]) => object): void {
  Object.defineProperty(cls.prototype, BRAND, { value: true });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: unknown, x: unknown): boolean {
      return this === cls ? BRAND in Object(x) : Function.prototype[Symbol.hasInstance].call(this, x);
    },
  });
}
