// Generated JavaScript values for the differential tests of the object path (walk.test.ts,
// walk-wasm.test.ts): strings heavy in what JSON escapes and in every UTF-8 width, numbers at
// the edges of the format, members and items JSON.stringify drops or nulls, holes,
// null-prototype objects, integer-like keys, JSON inside JSON; with `unusual`, also what
// JSON.stringify treats specially (toJSON, Dates, class instances, boxed primitives, Maps,
// typed arrays) and getters.
import { rng } from './reference.ts';

const CONTROL = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i));
const PIECES = [...CONTROL, '"', '\\', '/', '\x7f', '\u0080', '\u07ff', '\u0800', '\u2028', '\uffff', '\ue000', 'é', '日本', '😀', '👩‍💻', '\u{10ffff}', 'a', 'Z', ' ', '{'];
const NUMBERS = [0, -0, 1e21, 1e-7, 5e-324, -1.5, 2 ** 53 + 2, 0.1 + 0.2, 1.7976931348623157e308, -42];

class Point {
  x = 1;
  y = [2];
}

export function valueGen(seed: number, unusual: boolean) {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const str = (max: number): string => {
    let s = '';
    for (let i = 0, n = int(max); i < n; i++) s += r() < 0.4 ? PIECES[int(PIECES.length)]! : 'plain text '.slice(0, 1 + int(11));
    return s;
  };
  const num = (): number => (r() < 0.6 ? NUMBERS[int(NUMBERS.length)]! : (r() - 0.5) * 10 ** (int(40) - 20));
  const getterValue = str(4);
  const special = (): unknown => {
    const fixed = str(5);
    return [new Date(int(2e12)), { toJSON: (k: string) => `${fixed}@${k}` }, new Point(), new Number(3), new String(fixed), new Boolean(true), new Map(), new Uint8Array([1, 2])][int(8)];
  };
  const value = (depth: number): unknown => {
    switch (int(depth > 4 ? 5 : 10)) {
      case 0:
        return str(r() < 0.8 ? 10 : 200);
      case 1:
        return num();
      case 2:
        return r() < 0.3 ? null : r() < 0.5;
      case 3:
        return JSON.stringify(value(depth + 1));
      case 4:
        return unusual && r() < 0.5 ? special() : [undefined, () => 1, Symbol('s')][int(3)];
      case 5:
      case 6: {
        const a: unknown[] = Array.from({ length: int(6) }, () => value(depth + 1));
        if (r() < 0.2) a[a.length + 1] = str(3); // a hole
        return a;
      }
      default: {
        const o: Record<string, unknown> = r() < 0.2 ? Object.create(null) : {};
        for (let i = 0, n = int(7); i < n; i++) o[r() < 0.7 ? str(8) : ['role', 'content', '0', '10', '2'][int(5)]!] = value(depth + 1);
        if (unusual && r() < 0.1) Object.defineProperty(o, 'getter', { get: () => getterValue, enumerable: true });
        return o;
      }
    }
  };
  return { value, str, int, r };
}
