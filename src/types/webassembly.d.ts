// The slice of the WebAssembly JS API that src/core uses. @types/node does not declare it and
// the DOM lib would drag in browser globals the package must not depend on.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: BufferSource);
  }
  class Instance {
    constructor(module: Module, imports?: object);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  function validate(bytes: BufferSource): boolean;
}
type BufferSource = ArrayBufferView | ArrayBuffer;
