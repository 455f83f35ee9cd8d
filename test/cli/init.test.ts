// `tapedeck init` with real git in a temporary repository: afterwards `git diff` shows a tape
// as its JSON export (the added recording, line by line), not "Binary files differ".
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { DEFAULT_TEXTCONV } from '../../src/store/git-diff.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-init-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });
const tapedeck = (cwd: string, ...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' });
const written = (text: string) => ({ request: { url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] } }, response: { body: { answer: text } } });

/** An OpenAI SSE stream and a Bedrock ConverseStream naming `city`, recorded through createFetch. */
async function recordStreams(tape: string, city: string): Promise<void> {
  const enc = new TextEncoder();
  const frame = (type: string, payload: object) =>
    encodeEventStreamMessage({ headers: [{ name: ':event-type', type: 'string', value: type }, { name: ':content-type', type: 'string', value: 'application/json' }, { name: ':message-type', type: 'string', value: 'event' }], body: enc.encode(JSON.stringify(payload)) });
  const words = ['The', ' capital', ' is', ` ${city}`, '.'];
  const upstream = (async (input: RequestInfo | URL) => {
    const url = String(input);
    if (url.endsWith('/converse-stream')) {
      const frames = [frame('messageStart', { role: 'assistant' }), ...words.map((w) => frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: w } })), frame('contentBlockStop', { contentBlockIndex: 0 }), frame('messageStop', { stopReason: 'end_turn' }), frame('metadata', { usage: { inputTokens: 5, outputTokens: 5, totalTokens: 10 }, metrics: { latencyMs: 1 } })];
      return new Response(Buffer.concat(frames), { headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
    }
    const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body = chunk({ role: 'assistant', content: '' }) + words.map((w) => chunk({ content: w })).join('') + chunk({}, 'stop') + 'data: [DONE]\n\n';
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  }) as typeof fetch;
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {} });
  try {
    const post = (url: string, body: object) => f(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.arrayBuffer());
    await post('https://api.openai.com/v1/chat/completions', { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Capital?' }] });
    await post('https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse-stream', { messages: [{ role: 'user', content: [{ text: 'Capital?' }] }] });
  } finally {
    await f.close();
  }
}

describe('tapedeck init', () => {
  it('makes git diff show tapes as their JSON export', async () => {
    const repo = join(dir, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    const tape = join(repo, 'chat.tape');
    await addRecordings({ tape }, [written('first question')]);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'tape');
    await addRecordings({ tape }, [written('second question')]);
    expect(git(repo, 'diff')).toMatch(/Binary files .* differ/);

    // The test runs the built CLI directly instead of `npx tapedeck export`.
    const out = tapedeck(repo, 'init', '--textconv', `"${process.execPath}" "${CLI}" export`);
    expect(out).toContain('added "*.tape diff=tapedeck"');
    expect(readFileSync(join(repo, '.gitattributes'), 'utf8')).toContain('*.tape diff=tapedeck\n');
    const diff = git(repo, 'diff', '--', 'chat.tape');
    expect(diff).not.toMatch(/Binary files/);
    expect(diff).toMatch(/^\+.*second question/m);
    // The first recording is context, not a change: the export is stable.
    expect(diff).not.toMatch(/^[-+].*first question/m);

    // Idempotent: nothing added twice; init without --textconv sets the default command.
    expect(tapedeck(repo, 'init', '--textconv', `"${process.execPath}" "${CLI}" export`)).toContain('already in');
    expect(readFileSync(join(repo, '.gitattributes'), 'utf8').match(/diff=tapedeck/g)).toHaveLength(1);
    tapedeck(repo, 'init');
    expect(git(repo, 'config', '--get', 'diff.tapedeck.textconv').trim()).toBe(DEFAULT_TEXTCONV);
  });

  it("ignores tapedeck's working files beside a tape, which a killed run leaves behind", async () => {
    const repo = join(dir, 'repo-ignore');
    execFileSync('git', ['init', '-q', repo]);
    writeFileSync(join(repo, '.gitignore'), 'node_modules/');
    const out = tapedeck(repo, 'init', '--no-hook');
    expect(out).toMatch(/added tapedeck's working files .* to .*\.gitignore \(commit it\)/);
    // What a kill -9 leaves: a writer registration, the lock, a rewrite's and a pull's file.
    const tape = join(repo, 'tapes', 'chat.tape');
    await addRecordings({ tape }, [written('a question')]);
    mkdirSync(`${tape}.writers`);
    writeFileSync(join(`${tape}.writers`, '4242-abcdef.json'), '{}');
    writeFileSync(`${tape}.lock`, '');
    writeFileSync(join(repo, 'tapes', '.chat.tape.4242.0a1b2c3d.tmp'), '');
    writeFileSync(join(repo, 'tapes', '.chat.tape.4242.0a1b2c3d.import.tmp'), '');
    writeFileSync(join(repo, 'tapes', '.chat.tape.4242.0a1b2c3d.pull'), '');
    // A rerecord killed while it wrote its draft (failed before: both were committed).
    writeFileSync(join(repo, 'tapes', 'chat.rerecorded.tape.partial'), '');
    mkdirSync(join(repo, 'tapes', 'chat.rerecorded.tape.partial.writers'));
    writeFileSync(join(repo, 'tapes', 'chat.rerecorded.tape.partial.writers', '4242-abcdef.json'), '{}');
    git(repo, 'add', '-A');
    expect(git(repo, 'diff', '--cached', '--name-only').split('\n').filter(Boolean).sort()).toEqual(['.gitattributes', '.gitignore', 'tapes/chat.tape']);
    // The user's own lines stay, and nothing is added twice.
    expect(tapedeck(repo, 'init', '--no-hook')).toContain("tapedeck's working files already in");
    const text = readFileSync(join(repo, '.gitignore'), 'utf8');
    expect(text.startsWith('node_modules/\n')).toBe(true);
    expect(text.match(/\*\.tape\.writers\//g)).toHaveLength(1);
  });

  it('git diff --stat says a tape changed, not Bin', async () => {
    const repo = join(dir, 'stat');
    execFileSync('git', ['init', '-q', repo]);
    const tape = join(repo, 'chat.tape');
    await addRecordings({ tape }, [written('first question')]);
    tapedeck(repo, 'init', '--no-hook', '--textconv', `"${process.execPath}" "${CLI}" export --review`);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'tape');
    await addRecordings({ tape }, [written('second question')]);
    const stat = git(repo, 'diff', '--stat', '--', 'chat.tape');
    // git's diffstat never runs the textconv: it counts the raw bytes' lines once the driver
    // says the file is not binary. What matters is that it says "changed", not "Bin".
    expect(stat).not.toContain('Bin');
    expect(stat).toMatch(/chat\.tape \| +[1-9]\d* \+/);
  });

  it('git diff of a re-recorded stream shows the answer and the changed events, one per line', async () => {
    const repo = join(dir, 'streams');
    execFileSync('git', ['init', '-q', repo]);
    const tape = join(repo, 'chat.tape');
    await recordStreams(tape, 'Paris');
    tapedeck(repo, 'init', '--no-hook', '--textconv', `"${process.execPath}" "${CLI}" export --review`);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'tape');
    rmSync(tape);
    await recordStreams(tape, 'Lyon');
    const diff = git(repo, 'diff', '--', 'chat.tape');
    // Every changed line is short: no escaped stream, no base64 of the event-stream frames.
    const changed = diff.split('\n').filter((l) => /^[-+][^-+]/.test(l));
    expect(Math.max(...changed.map((l) => l.length))).toBeLessThan(300);
    // The OpenAI event and the Bedrock frame that carry the word, and each assembled answer.
    expect(changed).toContainEqual(expect.stringMatching(/^\+ +"data: \{.*\\"content\\":\\" Lyon\\"/));
    expect(changed).toContainEqual(expect.stringMatching(/^\+ +"contentBlockDelta \{.*\\"text\\":\\" Lyon\\"/));
    expect(changed.filter((l) => /^\+ +"(content|text)": "The capital is Lyon\."/.test(l))).toHaveLength(2);
    expect(changed).toContainEqual(expect.stringMatching(/^- +"data: \{.*Paris/));
  });

  it('writes a pre-commit hook that refuses a tape holding a credential, and leaves an existing hook alone', async () => {
    const repo = join(dir, 'hook');
    execFileSync('git', ['init', '-q', repo]);
    const hook = join(repo, '.git', 'hooks', 'pre-commit');
    const out = tapedeck(repo, 'init', '--textconv', `"${process.execPath}" "${CLI}" export --review`);
    expect(out).toContain(`wrote ${hook}`);
    expect(readFileSync(hook, 'utf8')).toContain('exec npx --no-install llm-tapedeck scan --staged');
    // The test points the hook at the built CLI instead of npx.
    writeFileSync(hook, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" scan --staged\n`);
    const tape = join(repo, 'chat.tape');
    // keepSecrets: a tape written as an older version or another tool would.
    await addRecordings({ tape, redact: { keepSecrets: true } }, [written('clean question')]);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'clean tape');
    await addRecordings({ tape, redact: { keepSecrets: true } }, [written('key sk-proj-Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9Pz0X in it')]);
    git(repo, 'add', '.');
    let err = '';
    try {
      git(repo, 'commit', '-qm', 'secret');
    } catch (e) {
      err = String((e as { stdout: string }).stdout) + String((e as { stderr: string }).stderr);
    }
    expect(err).toMatch(/chat\.tape: record 1 \(byte \d+\) \$\.request\.body.*: key format "sk-p…"/);
    expect(git(repo, 'log', '--format=%s')).not.toContain('secret');
    // Run again: an existing hook is never overwritten, only the line to add is printed.
    const custom = '#!/bin/sh\necho mine\n';
    writeFileSync(hook, custom);
    const again = tapedeck(repo, 'init', '--textconv', `"${process.execPath}" "${CLI}" export --review`);
    expect(again).toContain('add this line to it:\n  npx --no-install llm-tapedeck scan --staged');
    expect(readFileSync(hook, 'utf8')).toBe(custom);
  });

  it('outside a git repository: exit 1 with a hint', () => {
    const plain = join(dir, 'plain');
    mkdirSync(plain, { recursive: true });
    writeFileSync(join(plain, 'x'), '');
    let err = '';
    let code = 0;
    try {
      execFileSync(process.execPath, [CLI, 'init'], { cwd: plain, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, GIT_CEILING_DIRECTORIES: dir } });
    } catch (e) {
      err = String((e as { stderr: string }).stderr);
      code = (e as { status: number }).status;
    }
    expect(code).not.toBe(0);
    expect(err).toContain('not inside a git repository');
    expect(err).toContain('hint');
  });
});
