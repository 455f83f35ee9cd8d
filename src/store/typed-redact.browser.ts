/** typed-redact.ts for browser builds: a page stores no value, so a typed one stays as it is. */
import type { TypedMasks } from './typed-redact.ts';

/** `v` as it is (see typed-redact.ts). */
export function typedValue(v: object, _masks: TypedMasks): unknown {
  return v;
}
