// Drift reports on tapes recorded for real: the OpenAI and Anthropic SDKs and a plain fetch,
// through createFetch, against a fake provider whose answers change one kind at a time. Every
// call of every variant is classified as the change made on purpose, and nothing else.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriftClass } from '../../src/drift/classify.ts';
import { loadPaths } from '../../src/drift/load.ts';
import { driftReport, type DriftReport } from '../../src/drift/report.ts';
import { renderHtml } from '../../src/drift/render-html.ts';
import { renderMarkdown } from '../../src/drift/render-markdown.ts';
import { renderTerminal } from '../../src/drift/render-terminal.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { VARIANTS, type Variant } from './drift-upstream.ts';
import { CALLS, recordVariant } from './record.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-drift-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tape = (name: string) => join(dir, `${name}.tape`);
const cli = (args: string[], cwd = dir) => spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });

beforeAll(async () => {
  await recordVariant(tape('base'), 'base');
  for (const v of VARIANTS) await recordVariant(tape(v), v);
  await recordVariant(tape('changed'), 'base', { rephrase: true, swapLast: true });
}, 120_000);

async function report(oldName: string, newName: string): Promise<DriftReport> {
  const { before, after } = await loadPaths(tape(oldName), tape(newName));
  return driftReport(before.tapes, after.tapes, { old: oldName, new: newName });
}

/** The classes each call must get when the upstream answers as `v` instead of 'base'. */
function expected(v: Variant, call: (typeof CALLS)[number]): DriftClass[] {
  switch (v) {
    case 'base':
      return ['identical'];
    case 'benign':
      return ['benign'];
    case 'text':
      return call.kind === 'text' || call.kind === 'json' ? ['text'] : ['identical'];
    case 'tool-calls':
      return call.kind === 'tool' ? ['tool-calls'] : ['identical'];
    case 'finish':
      return call.kind === 'json' ? ['identical'] : ['finish'];
    case 'structure':
      // The JSON output lost a member: its text changed too.
      return call.kind === 'schema' ? ['structure', 'text'] : ['structure'];
    case 'stream':
      return call.streamed ? ['stream'] : ['identical'];
    case 'status':
      return ['status'];
  }
}

describe('classification', () => {
  for (const v of VARIANTS) {
    it(`${v}: every call gets the class of the change made, for every shape, plain and streamed`, async () => {
      const r = await report('base', v);
      expect(r.entries.map((e) => e.status)).toEqual(CALLS.map(() => 'paired'));
      const got = r.entries.map((e, i) => ({ call: CALLS[i]!.name, shape: e.shape, streamed: e.new!.streamed, classes: e.classes }));
      // An error answer is a JSON error document, never a stream.
      const want = CALLS.map((c) => ({ call: c.name, shape: v === 'status' ? 'json' : c.shape, streamed: v === 'status' ? false : c.streamed, classes: expected(v, c) }));
      expect(got).toEqual(want);
      expect(r.summary.pairs).toBe(CALLS.length);
      // Exit status: only identical and benign pass by default.
      expect(r.summary.failing).toBe(r.entries.filter((e) => e.primary !== 'identical' && e.primary !== 'benign').length);
    });
  }

  it('text: a word diff that gives both texts back, and their similarity', async () => {
    const r = await report('base', 'text');
    const e = r.entries[0]!;
    const ops = e.details.text!.ops;
    expect(ops.filter(([op]) => op !== '+').map(([, t]) => t).join('')).toBe('The capital of France is Paris. It sits on the Seine.');
    expect(ops.filter(([op]) => op !== '-').map(([, t]) => t).join('')).toBe('The capital of France is Paris, a city on the river Seine.');
    // 8 words in common (The capital of France is on the Seine.) of 11 and 12: 2*8/(11+12)
    expect(e.details.text!.similarity).toBeCloseTo(16 / 23, 5);
  });

  // Failed before: the terminal and Markdown showed a diff only of more than one op, so an
  // answer whose text was emptied (one removal) or that is new (one addition) showed none.
  it('text emptied or new: the terminal, Markdown and HTML show the removed or added words', async () => {
    for (const [op, words, shown] of [['-', 'Sure, here it is.', '[-Sure, here it is.-]'], ['+', 'Now a text answer.', '{+Now a text answer.+}']] as const) {
      const r = await report('base', 'text');
      const e = r.entries[0]!;
      e.details.text = { similarity: 0, ops: [[op, words]] };
      expect(renderTerminal(r, { colour: false })).toContain(shown);
      expect(renderMarkdown(r)).toContain(shown);
      expect(renderHtml(r)).toContain(words);
    }
  });

  it('tool calls: the arguments that changed, as a JSON diff', async () => {
    const r = await report('base', 'tool-calls');
    for (const e of r.entries.filter((x) => x.classes.includes('tool-calls'))) {
      expect(e.details.toolCalls).toEqual([
        { change: 'arguments', index: 0, name: 'get_weather', oldArguments: { city: 'Paris', unit: 'celsius' }, newArguments: { city: 'Paris', unit: 'fahrenheit' }, changes: [{ path: 'unit', kind: 'value', old: 'celsius', new: 'fahrenheit' }] },
      ]);
    }
  });

  it('finish, structure and benign say what changed', async () => {
    const fin = await report('base', 'finish');
    expect(fin.entries.map((e) => e.details.finish && `${e.details.finish.old}->${e.details.finish.new}`)).toEqual([
      'stop->length', 'stop->length', 'tool_calls->length', 'tool_calls->length', 'stop->length',
      'completed->incomplete:max_output_tokens', 'completed->incomplete:max_output_tokens', 'completed->incomplete:max_output_tokens',
      'end_turn->max_tokens', 'end_turn->max_tokens', 'tool_use->max_tokens', 'tool_use->max_tokens', undefined,
    ]);
    const st = await report('base', 'structure');
    expect(st.entries[0]!.details.structure).toEqual(['moderation: added (object)']);
    expect(st.entries[4]!.details.structure).toEqual(['output population: removed (was number)', 'output does not fit the schema: population: required, missing', 'moderation: added (object)']);
    expect(st.entries[12]!.details.structure).toEqual(['results[0].score: number -> string']);
    const be = await report('base', 'benign');
    expect(be.entries[0]!.details.benign).toEqual(['whitespace in the text', 'usage: output tokens 12 -> 13', 'id changed', 'created changed', 'system_fingerprint changed']);
  });

  it('a request asked in other words pairs with its old recording and says what changed; the rest is added or removed', async () => {
    const r = await report('base', 'changed');
    const first = r.entries[0]!;
    expect(first.status).toBe('paired');
    expect(first.old!.key).not.toBe(first.new!.key);
    expect(first.requestChange).toEqual(['message 0 (user) text differs']);
    // The answer's ids follow the prompt: only noise changed.
    expect(first.classes).toEqual(['benign']);
    expect(r.entries.filter((e) => e.status !== 'paired').map((e) => [e.status, e.route])).toEqual([
      ['added', 'POST /v1/messages'],
      ['removed', 'POST /v1/search'],
    ]);
    expect(r.summary).toMatchObject({ pairs: 12, added: 1, removed: 1, failing: 0 });
  });

  it('repeats of one request pair in recorded order; one more is added', async () => {
    const values = (await readTape(tape('base'))).records.map((x) => x.value);
    const text = (await readTape(tape('text'))).records.map((x) => x.value);
    // old: A B A'  new: A(text) B A(text) A(text): the two A pairs are in order, the third is added
    const r = driftReport([{ name: 't', records: [values[0], values[1], text[0]] }], [{ name: 't', records: [text[0], values[1], text[0], text[0]] }], { old: 'o', new: 'n' });
    expect(r.entries.map((e) => [e.status, e.old?.index, e.new?.index, e.primary])).toEqual([
      ['paired', 0, 0, 'text'],
      ['paired', 1, 1, 'identical'],
      ['paired', 2, 2, 'identical'],
      ['added', undefined, 3, ''],
    ]);
  });
});

describe('output', () => {
  const variantsDir = join(dir, 'variants');
  const baseDir = join(dir, 'bases');
  beforeAll(() => {
    mkdirSync(variantsDir);
    mkdirSync(baseDir);
    for (const v of VARIANTS.filter((x) => x !== 'base')) {
      copyFileSync(tape(v), join(variantsDir, `${v}.tape`));
      copyFileSync(tape('base'), join(baseDir, `${v}.tape`));
    }
  });

  it('markdown and JSON match the committed snapshots', async () => {
    const md = cli(['diff', 'bases', 'variants', '--format', 'markdown']);
    expect(md.stderr).toBe('');
    expect(md.status).toBe(1);
    await expect(md.stdout).toMatchFileSnapshot('__snapshots__/drift.md');
    const js = cli(['diff', 'bases', 'variants', '--format', 'json']);
    expect(js.status).toBe(1);
    const parsed = JSON.parse(js.stdout) as DriftReport;
    expect(parsed.version).toBe(1);
    // The snapshot is of the stable fields; text runs are checked above. Each variant was
    // recorded against a fake provider on a port of its own: the origins' ports are not stable.
    await expect(JSON.stringify(parsed, null, 2).replace(/("origin": "http:\/\/127\.0\.0\.1:)\d+"/g, '$1PORT"')).toMatchFileSnapshot('__snapshots__/drift.json');
  });

  it('the terminal table is plain when piped, coloured on a terminal', async () => {
    const t = cli(['diff', tape('base'), tape('text')]);
    expect(t.status).toBe(1);
    expect(t.stdout).not.toContain('\x1b[');
    expect(t.stdout).toMatch(/^tapedeck diff .* 13 pairs \(7 text, 6 identical\), 0 added, 0 removed\n/);
    expect(t.stdout).toContain('[-Paris.-]{+Paris,+} [-It-]{+a+} [-sits-]{+city+} on the{+ river+} Seine.');
    const { before, after } = await loadPaths(tape('base'), tape('text'));
    const coloured = renderTerminal(driftReport(before.tapes, after.tapes, { old: 'a', new: 'b' }), { colour: true });
    expect(coloured).toContain('\x1b[33mtext');
  });

  it('exit codes: 0 for noise, 1 for what --fail-on names, 2 for bad input', () => {
    expect(cli(['diff', tape('base'), tape('benign')]).status).toBe(0);
    expect(cli(['diff', tape('base'), tape('text')]).status).toBe(1);
    expect(cli(['diff', tape('base'), tape('text'), '--fail-on', 'tool-calls,structure']).status).toBe(0);
    expect(cli(['diff', tape('base'), tape('tool-calls'), '--fail-on', 'tool-calls,structure']).status).toBe(1);
    expect(cli(['diff', tape('base'), tape('changed'), '--fail-on', 'added']).status).toBe(1);
    expect(cli(['diff', tape('base'), tape('status'), '--fail-on', 'none']).status).toBe(0);
    const bad: [string[], string, RegExp][] = [
      [['diff', tape('base'), 'missing.tape'], 'E_FILE', /missing\.tape/],
      [['diff', tape('base'), tape('text'), '--fail-on', 'txt'], 'E_ARG', /--fail-on/],
      // Failed before: an empty list (an unset variable) meant none, and the gate was off.
      [['diff', tape('base'), tape('text'), '--fail-on', ''], 'E_ARG', /--fail-on none never fails/],
      [['diff', tape('base'), tape('text'), '--fail-on', ' , '], 'E_ARG', /--fail-on names no class/],
      [['diff', tape('base'), tape('text'), '--format', 'yaml'], 'E_ARG', /--format/],
      [['diff', tape('base'), tape('text'), '--git', 'HEAD'], 'E_USAGE', /--git/],
      [['diff', join(dir, 'bases'), tape('text')], 'E_DIFF_INPUT', /two folders/],
      [['diff', tape('base')], 'E_GIT', /not in a git repository/],
      [['diff'], 'E_USAGE', /tapedeck diff/],
    ];
    writeFileSync(join(dir, 'not-a-tape.tape'), '{"json": true}');
    bad.push([['diff', tape('base'), join(dir, 'not-a-tape.tape')], 'E_TAPE_CORRUPT', /not-a-tape/]);
    for (const [args, code, hint] of bad) {
      const r = cli(args, join(dir, 'variants'));
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(new RegExp(`^tapedeck: ${code} [^\\n]+\\nhint: [^\\n]+\\n$`));
      expect(r.stderr, args.join(' ')).toMatch(hint);
    }
  });

  it('a recording lost to damage: diff and stats report the rest, then exit 2 naming the tape and verify', async () => {
    // A byte in the middle of the second record's payload flipped (its CRC then fails): the
    // record is dropped by the reader, and diff would count it as removed, which fails nothing.
    const bytes = readFileSync(tape('base'));
    const victim = (await readTape(tape('base'))).records[1]!;
    const at = victim.offset + Math.floor(victim.length / 2);
    bytes[at] = bytes[at]! ^ 0x20;
    const damagedTape = join(dir, 'damaged.tape');
    writeFileSync(damagedTape, bytes);
    expect((await readTape(damagedTape)).warnings.map((w) => w.code)).toEqual(['E_TAPE_CORRUPT']);
    for (const args of [['diff', tape('base'), damagedTape], ['diff', damagedTape, tape('base')], ['stats', damagedTape]]) {
      const r = cli(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).not.toBe('');
      expect(r.stderr, args.join(' ')).toContain(`tapedeck: warning: ${damagedTape}: E_TAPE_CORRUPT at byte ${victim.offset}`);
      expect(r.stderr, args.join(' ')).toContain(`hint: the report leaves the damaged recordings out, so it is no pass: tapedeck verify ${damagedTape} lists the damage`);
    }
    // Sound tapes still exit as before.
    expect(cli(['diff', tape('base'), tape('benign')]).status).toBe(0);
    expect(cli(['stats', tape('base')]).status).toBe(0);
  });

  it('--git: a re-recorded folder against its committed version, and a tape new since then', () => {
    const repo = join(dir, 'repo');
    mkdirSync(join(repo, 'tapes'), { recursive: true });
    const git = (...a: string[]) => execFileSync('git', ['-c', 'user.email=t@example.org', '-c', 'user.name=t', ...a], { cwd: repo });
    git('init', '-q');
    copyFileSync(tape('base'), join(repo, 'tapes', 'app.tape'));
    git('add', '.');
    git('commit', '-qm', 'tapes');
    // Re-recorded: the answers' text changed; and a new test's tape.
    copyFileSync(tape('text'), join(repo, 'tapes', 'app.tape'));
    copyFileSync(tape('base'), join(repo, 'tapes', 'new.tape'));
    const r = cli(['diff', 'tapes/', '--format', 'json'], repo);
    expect(r.stderr).toBe('');
    const rep = JSON.parse(r.stdout) as DriftReport;
    expect(rep.old).toBe('HEAD:tapes/');
    expect(rep.summary.classes.text).toBe(7);
    expect(rep.summary.added).toBe(CALLS.length);
    expect(r.status).toBe(1);
    // A single tape, from inside the folder, against an explicit revision.
    const one = cli(['diff', 'app.tape', '--git', 'HEAD', '--format', 'json'], join(repo, 'tapes'));
    expect(JSON.parse(one.stdout).summary.classes.text).toBe(7);
    const bad = cli(['diff', 'app.tape', '--git', 'no-such-rev'], join(repo, 'tapes'));
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^tapedeck: E_GIT git has no commit "no-such-rev"/);
  });

  it('--html writes one self-contained page', () => {
    const out = join(dir, 'report.html');
    const r = cli(['diff', 'bases', 'variants', '--html', out, '--format', 'json'], dir);
    expect(r.status).toBe(1);
    const html = readFileSync(out, 'utf8');
    expect(html).toMatch(/^<!doctype html>/);
    // Offline: nothing is fetched.
    expect(html).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    expect(renderMarkdown(JSON.parse(r.stdout) as DriftReport)).toBe(cli(['diff', 'bases', 'variants', '--format', 'markdown'], dir).stdout);
  });
});

describe('ReplayCache tapes', () => {
  it('records put through ReplayCache pair by key and are classified by their values', async () => {
    const { ReplayCache } = await import('../../src/store/replay-cache.ts');
    const put = async (file: string, answer: string, extra: Record<string, unknown>) => {
      const cache = await ReplayCache.open(file, { mode: 'record' });
      await cache.put({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Name a colour' }] }, { answer, ...extra });
      await cache.put({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Name a shape' }] }, { answer: 'A circle.', ...extra });
      await cache.close();
    };
    await put(join(dir, 'cache-old.tape'), 'Blue, like the sky.', { id: 'a1' });
    await put(join(dir, 'cache-new.tape'), 'Green, like grass.', { id: 'b2' });
    const { before, after } = await loadPaths(join(dir, 'cache-old.tape'), join(dir, 'cache-new.tape'));
    const r = driftReport(before.tapes, after.tapes, { old: 'o', new: 'n' });
    expect(r.entries.map((e) => [e.route, e.shape, e.classes])).toEqual([
      ['cache', 'json', ['text']],
      ['cache', 'json', ['benign']],
    ]);
    expect(r.entries[1]!.details.benign).toEqual(['id changed']);
  });
});
