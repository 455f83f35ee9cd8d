// A VCR.py cassette that does not parse (cut short by a crash or an interrupted download, or
// hand-edited) is E_IMPORT_PARSE naming the line and column, the interaction it breaks in and,
// when the break is at the end of the file, that it was cut short. The parser gives a position
// only as an offset without its pretty errors, and the message once said only
// `Missing closing "quote`, with no place at all.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { vcrCassette, vcrInteraction } from './vcr-cassette.ts';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-vcr-place-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const interaction = (text: string) =>
  vcrInteraction(`{"messages":[{"role":"user","content":"${text}"}],"model":"gpt-4o-mini"}`, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"${text}"},"finish_reason":"stop"}]}`);
const cassette = vcrCassette(interaction('a'), interaction('b'));

async function parseError(text: string, name: string): Promise<TapedeckError> {
  const src = join(dir, `${name}.yaml`);
  writeFileSync(src, text);
  const e = await importRecordings(src, join(dir, `${name}.tape`)).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TapedeckError);
  expect((e as TapedeckError).code).toBe('E_IMPORT_PARSE');
  return e as TapedeckError;
}

describe('a VCR.py cassette that does not parse', () => {
  it('cut inside a quoted body: the line, column and interaction, and that it ends early', async () => {
    const at = cassette.indexOf('"content":"b"}],');
    const e = await parseError(cassette.slice(0, at), 'cut');
    const line = cassette.slice(0, at).split('\n').length;
    expect(e.message).toContain(`line ${line}, column `);
    expect(e.message).toMatch(/\(interactions\[1\]; the file ends early: truncated\?\): Missing closing/);
  });

  it('broken in the middle: the interaction, not "truncated"', async () => {
    const broken = cassette.replace("      string: '{\"id\":\"chatcmpl-1\"", "      string: '{\"id\":\"chatcmpl-1\"'  '");
    const e = await parseError(broken, 'middle');
    expect(e.message).toMatch(/line \d+, column \d+ \(interactions\[0\]\)/);
    expect(e.message).not.toMatch(/truncated\?\)/);
  });
});
