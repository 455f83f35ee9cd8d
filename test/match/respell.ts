// One respelling of JSON text for the key property tests (reference normalizer, raw-bytes path,
// spec version 2): the same value written as another client might, which must never change a key.
type Obj = Record<string, any>;

/**
 * JSON text of v as another client might write it: member order shuffled, whitespace between
 * tokens, numbers respelled with the same value (1 -> 1.0, 1e0, 100e-2), characters written as
 * \u escapes (astral ones as surrogate-pair escapes), '/' as '\/'. Without `escapes`, strings
 * are written as JSON.stringify writes them.
 */
export function respell(v: unknown, r: () => number, escapes = true): string {
  const ws = () => [' ', '', '\n ', '\t', '', '\r\n'][Math.floor(r() * 6)]!;
  if (v === null || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') {
    const s = JSON.stringify(v);
    const [mant, exp] = s.split('e') as [string, string | undefined];
    const frac = mant.includes('.') ? `${mant}0` : `${mant}.0`;
    const forms = exp === undefined ? [s, frac, `${mant}e0`, `${frac}E+0`] : [s, `${frac}e${exp}`, `${mant}E${exp}`];
    if (exp === undefined && /^-?[1-9]\d*$/.test(mant)) forms.push(`${mant}00e-2`);
    return forms[Math.floor(r() * forms.length)]!;
  }
  if (typeof v === 'string') {
    let out = '"';
    for (const ch of v) {
      const x = r();
      if (escapes && x < 0.1) for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
      else if (escapes && ch === '/' && x < 0.5) out += '\\/';
      else out += JSON.stringify(ch).slice(1, -1);
    }
    return `${out}"`;
  }
  if (Array.isArray(v)) return `[${ws()}${v.map((x) => respell(x, r, escapes)).join(`,${ws()}`)}${ws()}]`;
  // Members whose value is undefined are left out, as JSON.stringify leaves them out.
  const keys = Object.keys(v as Obj).filter((k) => (v as Obj)[k] !== undefined);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  return `{${ws()}${keys.map((k) => `${respell(k, r, escapes)}${ws()}:${ws()}${respell((v as Obj)[k], r, escapes)}`).join(`,${ws()}`)}${ws()}}`;
}
