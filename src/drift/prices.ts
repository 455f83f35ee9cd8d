// The price table behind cost estimates (`tapedeck stats`, `tapedeck rerecord`): US dollars per
// million tokens, input and output, from the providers' public list prices on PRICES_DATE.
// Prices change; `--prices file.json` overrides or adds models. A model is priced by the longest
// name in the table it starts with, so dated snapshots (gpt-4o-mini-2024-07-18) find their model.

import { MAX_INPUT_BYTES, TapedeckError } from '../errors.ts';
import { readBounded } from '../read-bounded.ts';

/** One model's price: US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
}

/** The day the default prices were taken from the providers' price pages. */
export const PRICES_DATE = '2025-10-01';

/** Default list prices (USD per 1M tokens) on {@link PRICES_DATE}; batch and cache discounts not applied. */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = Object.freeze({
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  o3: { input: 2, output: 8 },
  'o4-mini': { input: 1.1, output: 4.4 },
  'text-embedding-3-small': { input: 0.02, output: 0 },
  'text-embedding-3-large': { input: 0.13, output: 0 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'gemini-2.5-pro': { input: 1.25, output: 10 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4 },
  'amazon.nova-pro': { input: 0.8, output: 3.2 },
  'amazon.nova-lite': { input: 0.06, output: 0.24 },
  'amazon.nova-micro': { input: 0.035, output: 0.14 },
});

/**
 * The price of a model: the entry with the longest name the model starts with, or undefined.
 *
 * @example
 * priceOf('gpt-4o-mini-2024-07-18', DEFAULT_PRICES) // { input: 0.15, output: 0.6 }
 */
export function priceOf(model: string, table: Readonly<Record<string, Price>>): Price | undefined {
  const longest = (m: string) => {
    let best: string | undefined;
    for (const name of Object.keys(table)) if (m.startsWith(name) && (best === undefined || name.length > best.length)) best = name;
    return best === undefined ? undefined : table[best];
  };
  // A Bedrock model id (`us.anthropic.claude-3-5-haiku-...`, or an ARN ending in one) is priced
  // as its vendor's model when the table has no entry of its own.
  const id = model.replace(/^arn:aws[\w-]*:bedrock:[^:]*:[^:]*:[\w-]+\//, '');
  const unprefixed = id.replace(/^(?:us|eu|apac|global|us-gov|jp|au|ca)\./, '');
  return longest(model) ?? longest(id) ?? longest(unprefixed) ?? longest(unprefixed.replace(/^(?:anthropic|meta|mistral|cohere|deepseek|openai)\./, ''));
}

/**
 * The default table with a price file's entries over it. The file is JSON:
 * `{ "model-name": { "input": 2.5, "output": 10 } }` (USD per million tokens).
 *
 * @example
 * const table = loadPrices('prices.json')
 */
export function loadPrices(file: string | undefined): Record<string, Price> {
  const table: Record<string, Price> = { ...DEFAULT_PRICES };
  if (file === undefined) return table;
  const hint = '--prices takes a JSON file like {"gpt-4o": {"input": 2.5, "output": 10}} (USD per million tokens)';
  let parsed: unknown;
  try {
    // Counted while reading: a pipe or a device has no size to check first (/dev/zero never ends).
    parsed = JSON.parse(readBounded(file, { limit: MAX_INPUT_BYTES, most: 'the most a price file may hold', hint: 'A price file is small: --prices takes a JSON file like {"gpt-4o": {"input": 2.5, "output": 10}}.' }).toString('utf8'));
  } catch (e) {
    if (e instanceof TapedeckError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TapedeckError('E_FILE', `No such file: ${file}.`, { file, hint: 'Check the path given to --prices.' });
    throw new TapedeckError('E_PRICES', `${file} is not valid JSON: ${(e as Error).message}`, { file, hint });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TapedeckError('E_PRICES', `${file} must hold an object of models.`, { file, hint });
  for (const [model, p] of Object.entries(parsed)) {
    const ok = p !== null && typeof p === 'object' && ['input', 'output'].every((k) => typeof (p as Record<string, unknown>)[k] === 'number' && (p as Record<string, number>)[k]! >= 0);
    if (!ok) throw new TapedeckError('E_PRICES', `${file}: the price of ${JSON.stringify(model)} needs non-negative numbers "input" and "output".`, { file, hint });
    table[model] = { input: (p as Price).input, output: (p as Price).output };
  }
  return table;
}
