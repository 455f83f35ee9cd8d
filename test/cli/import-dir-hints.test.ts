// Directory errors of `tapedeck import` that pointed to the wrong fix (a user trial):
// - a folder of 2 YAML cassettes and 1 JSON cassette was "a directory of 1 VCR.py cassette
//   (...json)", its hint's loop taking only *.json, so the YAML cassettes were left out;
// - talkback's tape folder with a stray package.json was "none of the 1 *.json file ... is a
//   recording", never naming its *.json5 tapes or --from talkback.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importCommand } from '../../src/cli/import.ts';
import { TapedeckError } from '../../src/errors.ts';
import { vcrCassette, vcrInteraction } from '../proxy/vcr-cassette.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-dir-hints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const opts = { force: false, har: false, skipBad: false, review: false, textconv: false };
const ask = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
const answer = JSON.stringify({ id: 'c', choices: [] });

async function refusal(p: Promise<unknown>): Promise<TapedeckError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TapedeckError);
  return e as TapedeckError;
}

describe('directory errors name every recording and the fix', () => {
  it('counts YAML and JSON cassettes together, and the loop takes both', async () => {
    const cas = join(dir, 'cassettes');
    mkdirSync(cas);
    writeFileSync(join(cas, 'test_chat.yaml'), vcrCassette(vcrInteraction(ask, answer)));
    writeFileSync(join(cas, 'test_raw.yaml'), vcrCassette(vcrInteraction(ask, answer)));
    writeFileSync(join(cas, 'test_json.json'), JSON.stringify({ interactions: [], version: 1 }));
    const e = await refusal(importCommand(cas, join(dir, 'o.tape'), opts));
    expect(e.code).toBe('E_IMPORT_FORMAT');
    expect(e.message).toContain(`${cas} is a directory of 3 VCR.py cassettes (${join(cas, 'test_chat.yaml')}, ${join(cas, 'test_json.json')}, ${join(cas, 'test_raw.yaml')}), and import reads one file at a time`);
    expect(e.hint).toContain(`for f in ${join(cas, '*.yaml')} ${join(cas, '*.json')}; do tapedeck import "$f" "tapes/$(basename "\${f%.*}").tape" --from vcr; done`);
  });

  it('names the talkback tapes beside a stray package.json, and --from talkback', async () => {
    const tb = join(dir, 'tapes');
    mkdirSync(tb);
    for (let i = 1; i <= 5; i++) writeFileSync(join(tb, `unnamed-${i}.json5`), `{ meta: { createdAt: '2026-01-01T00:00:00.000Z', host: 'https://api.openai.com/' }, req: { headers: {}, url: '/v1/models', method: 'GET', body: '' }, res: { status: 200, headers: {}, body: 'ok ${i}' } }`);
    writeFileSync(join(tb, 'package.json'), '{"name":"app"}');
    const e = await refusal(importCommand(tb, join(dir, 'tb.tape'), opts));
    expect(e.code).toBe('E_IMPORT_FORMAT');
    expect(e.message).toContain(`${tb} holds 5 talkback tapes (*.json5: unnamed-1.json5, unnamed-2.json5, unnamed-3.json5, and 2 more) and 1 *.json file (package.json) that is no JSON recording`);
    expect(e.hint).toContain(`tapedeck import ${tb} ${join(dir, 'tb.tape')} --from talkback`);
  });
});
