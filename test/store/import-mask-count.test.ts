// The "values masked" count of an import, found by a user trial: a cassette whose
// filter_headers had already replaced the key with REDACTED or DUMMY reported "3 values masked",
// as one with the real key did, though no secret was in it; a user:password@ in a cassette's URI
// was dropped without being counted. Now only values that were secrets count, and the password
// of a URL, kept off the tape, counts as one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importRecordings } from '../../src/proxy/import.ts';
import { isOtherToolMask } from '../../src/store/redact.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-mask-count-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ask = (i: number) => JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: `q${i}` }] });
const answer = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [] });

/** A cassette of three calls sent with `Authorization: <auth>` (none when undefined) to `uri`. */
function cassette(name: string, auth: string | undefined, uri = 'https://api.openai.com/v1/chat/completions'): string {
  const one = (i: number) => `- request:
    body: '${ask(i)}'
    headers:
      Content-Type:
      - application/json
${auth === undefined ? '' : `      authorization:\n      - ${auth}\n`}    method: POST
    uri: ${uri}
  response:
    body:
      string: '${answer}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
`;
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, `interactions:\n${one(1)}${one(2)}${one(3)}version: 1\n`);
  return file;
}

describe('values masked', () => {
  it.each([
    ['a real key', 'Bearer sk-proj-MASKTEST0123456789abcdefABCDEFab', 3],
    ['REDACTED', 'REDACTED', 0],
    ['DUMMY', 'DUMMY', 0],
    ['Bearer XXXX', 'Bearer XXXX', 0],
    ['no header', undefined, 0],
  ])('counts %s in Authorization (%s) as %i masked', async (name, auth, masked) => {
    const src = cassette(name.replace(/\W/g, '-'), auth);
    const report = await importRecordings(src, join(dir, `${name.replace(/\W/g, '-')}.tape`));
    expect(report.records).toBe(3);
    expect(report.masked).toBe(masked);
  });

  it('counts a password in the URI, which the tape leaves out', async () => {
    const src = cassette('userinfo', undefined, 'https://bob:hunter2secret@api.openai.com/v1/chat/completions');
    const report = await importRecordings(src, join(dir, 'userinfo.tape'));
    expect(report.masked).toBe(3);
  });

  it('tells other tools\' placeholders from secrets', () => {
    for (const v of ['REDACTED', 'DUMMY', '<API_KEY>', '***', '[FILTERED]', 'Bearer REDACTED', 'your-api-key', '[REDACTED]']) expect(isOtherToolMask(v)).toBe(true);
    for (const v of ['sk-proj-MASKTEST0123456789abcdef', 'Bearer sk-ant-api03-xyz', 'hunter2', 'secret123']) expect(isOtherToolMask(v)).toBe(false);
  });
});
