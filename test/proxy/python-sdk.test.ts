// The real openai-python through the proxy, where it is installed (TAPEDECK_PYTHON names a
// python with `openai`, else python3 is tried): it records "Hi", a story, and the story streamed,
// then asks for a changed story, plain and streamed, against the replaying proxy. The miss must
// name the story sent the same way, and read as one short `str(e)`. Machines without
// openai-python run the same requests byte for byte in miss-ranking and sdk-misses
// (python-requests.ts, whose headers this test also checks against the real SDK's).
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream } from './fake-upstream.ts';
import { PYTHON_HEADERS } from './python-requests.ts';

const python = process.env.TAPEDECK_PYTHON ?? 'python3';
const hasOpenAI = spawnSync(python, ['-c', 'import openai'], { encoding: 'utf8' }).status === 0;

const SCRIPT = `
import json, sys, openai
c = openai.OpenAI(base_url=sys.argv[1] + "/v1", api_key="sk-test", max_retries=2)
out = []
def chat(prompt, stream):
    try:
        if stream:
            for _ in c.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}], stream=True): pass
        else:
            c.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}])
        out.append({"ok": True})
    except openai.APIStatusError as e:
        out.append({"ok": False, "type": type(e).__name__, "status": e.status_code, "str": str(e)})
for prompt, stream in json.loads(sys.argv[2]):
    chat(prompt, stream)
print(json.dumps(out))
`;

// Asynchronous: the proxy runs in this process and must answer while Python waits.
async function run(url: string, calls: [string, boolean][]): Promise<{ ok: boolean; type?: string; status?: number; str?: string }[]> {
  const r = await promisify(execFile)(python, ['-c', SCRIPT, url, JSON.stringify(calls)], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}

it.runIf(hasOpenAI)('openai-python: the closest recording is the story sent the same way, and str(e) is one short line', async () => {
  // Made here, not at the top: a file whose tests are all skipped runs no afterAll.
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-python-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const upstream = await startUpstream({ gapMs: 0 });
  const tape = join(dir, 'python.tape');
  const rec = await startProxy({ upstream: upstream.url, tape, mode: 'record', port: 0 });
  try {
    expect((await run(rec.url, [['Hi', false], ['Tell me a story', false], ['Tell me a story', true]])).every((x) => x.ok)).toBe(true);
  } finally {
    await rec.close();
  }
  // The headers the fixture claims are the SDK's own, but for versions of Python and the SDK.
  const sent = upstream.calls[0]!.headers;
  for (const [k, v] of Object.entries(PYTHON_HEADERS)) {
    if (/version|user-agent|runtime-version/.test(k)) expect(sent[k], k).toBeTypeOf('string');
    else expect(sent[k], k).toBe(v);
  }
  await upstream.close();
  const play = await startProxy({ tape, mode: 'replay', port: 0 });
  try {
    const [plain, streamed] = await run(play.url, [['Tell me a story about a dragon', false], ['Tell me a story about a dragon', true]]);
    for (const e of [plain!, streamed!]) {
      expect(e).toMatchObject({ ok: false, type: 'BadRequestError', status: 400 });
      expect(e.str!.length, e.str).toBeLessThan(600);
      expect(e.str).not.toContain('\\n');
      expect(e.str).toContain("'tapedeck miss: message 0 (user) text differs from the closest recording; re-record: restart tapedeck serve with --mode record;");
      expect(e.str).toContain('request: "Tell me a story about a dragon"; recording: "Tell me a story"');
      expect(e.str).not.toContain('more difference');
    }
    // max_retries=2 above: a miss is asked once per call, never retried.
    expect(play.handler.stats().misses).toBe(2);
  } finally {
    await play.close();
  }
});
