/** error-brand.ts for browser builds: a page bundles one copy of TapedeckError, plain `instanceof` holds. */
export function brand(_cls: abstract new (...args: never[]) => object): void {}
