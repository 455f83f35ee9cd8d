// AWS credentials as AWS makes them, drawn from a seeded generator, for the redaction tests of
// access key ids and their secrets (one generator, so each file's draws repeat run to run).
import { rng } from '../reference.ts';

export const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** base64's alphabet, which a secret access key is drawn from. */
export const ALPHABET = `${UPPER}abcdefghijklmnopqrstuvwxyz0123456789/+`;

/**
 * A seeded source of AWS key ids and secrets. `slash`: every secret has a `/` in it (as most
 * have), for tests of the escaped and percent-encoded spellings.
 *
 * @example
 * const { newId, newSecret } = awsKeys(5021, { slash: true });
 * newId('ASIA'); // 'ASIA' + 16 of [A-Z2-7]
 */
export function awsKeys(seed: number, opts: { slash?: boolean } = {}) {
  const g = rng(seed);
  const pick = (chars: string, n: number): string => Array.from({ length: n }, () => chars[Math.floor(g() * chars.length)]!).join('');
  /** A secret access key: 40 random characters of base64's alphabet, small and capital letters both. */
  const newSecret = (): string => {
    for (;;) {
      const s = pick(ALPHABET, 40);
      if (/[a-z]/.test(s) && /[A-Z]/.test(s) && (!opts.slash || s.includes('/'))) return s;
    }
  };
  const newId = (prefix = 'AKIA'): string => prefix + pick(`${UPPER}234567`, 16);
  return { g, pick, newSecret, newId };
}
