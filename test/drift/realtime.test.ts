// `tapedeck diff` on realtime sessions recorded for real (a scripted OpenAI Realtime and Gemini
// Live server, through the proxy): a server splits its text, transcript, tool arguments and
// audio into other deltas on every run, so a re-record that says the same is identical; a change
// of the words is `text` (with the transcript's word diff), of a tool call's arguments
// `tool-calls`; an event added or a tool call added stays `structure`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPaths } from '../../src/drift/load.ts';
import { driftReport, type DriftEntry, type DriftReport } from '../../src/drift/report.ts';
import { summarizeRealtime } from '../../src/store/realtime-summary.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { BASE, recordSessions, type RealtimeScript } from './realtime-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-drift-realtime-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tape = (name: string) => join(dir, `${name}.tape`);
// The CLI as shipped (npm run build first).
const cli = (...args: string[]) => spawnSync(process.execPath, [join(import.meta.dirname, '../../dist/cli.js'), 'diff', ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });

/** Each variant changes one thing of the base script. */
const VARIANTS: Record<string, Partial<RealtimeScript>> = {
  again: {},
  rechunked: { textChunk: 10, audioChunk: 1600 },
  reworded: { lead: 'You told me:' },
  'reworded-rechunked': { lead: 'You told me:', textChunk: 4 },
  spaced: { lead: 'You  said:' },
  'tool-args': { city: 'Lyon', textChunk: 5 },
  'extra-event': { extraEvent: true },
  'tool-added': { secondTool: true },
};

beforeAll(async () => {
  await recordSessions(tape('base'), BASE);
  for (const [name, v] of Object.entries(VARIANTS)) await recordSessions(tape(name), { ...BASE, ...v });
}, 60_000);

async function report(oldName: string, newName: string): Promise<DriftReport> {
  const { before, after } = await loadPaths(tape(oldName), tape(newName));
  return driftReport(before.tapes, after.tapes, { old: oldName, new: newName });
}

/** The server frames of each session of a tape, by its route. */
async function serverFrames(name: string): Promise<Record<string, number>> {
  const s = summarizeRealtime((await readTape(tape(name))).records.map((r) => r.value)).sessions;
  return Object.fromEntries(s.map((x) => [x.provider, x.serverFrames]));
}

const byProvider = (r: DriftReport) => Object.fromEntries(r.entries.map((e) => [e.route.split(' ')[1]!, e])) as Record<'openai' | 'gemini', DriftEntry>;
const opsText = (e: DriftEntry, keep: '-' | '+') => e.details.text!.ops.filter(([op]) => op !== keep).map(([, t]) => t).join('');

describe('tapedeck diff on realtime sessions', () => {
  it('pairs both sessions of each tape (an OpenAI Realtime and a Gemini Live one)', async () => {
    const r = await report('base', 'again');
    expect(r.entries.map((e) => [e.route.split(' ')[1], e.status, e.shape])).toEqual([
      ['gemini', 'paired', 'realtime'],
      ['openai', 'paired', 'realtime'],
    ]);
  });

  it('a re-record with the same deltas (other ids) is identical', async () => {
    const r = await report('base', 'again');
    expect(r.entries.map((e) => e.primary)).toEqual(['identical', 'identical']);
  });

  it('the same answers split into other deltas (text, transcript, tool arguments, audio) are identical', async () => {
    // The variant really has another number of server frames on both sessions.
    const [a, b] = [await serverFrames('base'), await serverFrames('rechunked')];
    expect(b.openai).not.toBe(a.openai);
    expect(b.gemini).not.toBe(a.gemini);
    const r = await report('base', 'rechunked');
    expect(r.entries.map((e) => ({ primary: e.primary, classes: e.classes, summary: e.summary }))).toEqual(r.entries.map(() => ({ primary: 'identical', classes: ['identical'], summary: 'same session' })));
    expect(r.summary.failing).toBe(0);
  });

  for (const name of ['reworded', 'reworded-rechunked']) {
    it(`${name}: other words are text, with the transcript's word diff, not structure`, async () => {
      const r = await report('base', name);
      for (const e of Object.values(byProvider(r))) {
        expect(e.primary).toBe('text');
        expect(e.classes).not.toContain('structure');
        expect(e.classes).not.toContain('tool-calls');
        // The old transcript has the old words only, the new one the new words only.
        expect(opsText(e, '+')).toContain('You said:');
        expect(opsText(e, '+')).not.toContain('told');
        expect(opsText(e, '-')).toContain('You told me:');
        expect(opsText(e, '-')).not.toContain('said');
        expect(e.details.text!.ops.filter(([op]) => op === '-').map(([, t]) => t.trim())).toContain('said:');
        expect(e.summary).toMatch(/^text \d+% similar/);
      }
      expect(r.summary.failing).toBe(2);
    });
  }

  it('a changed answer against itself split into other deltas is identical', async () => {
    const r = await report('reworded', 'reworded-rechunked');
    expect(r.entries.map((e) => e.primary)).toEqual(['identical', 'identical']);
  });

  it('other whitespace in the transcript is benign, as in an HTTP answer', async () => {
    const r = await report('base', 'spaced');
    for (const e of r.entries) {
      expect(e.classes).toEqual(['benign']);
      expect(e.details.benign).toContain('whitespace in the transcript');
    }
    expect(r.summary.failing).toBe(0);
  });

  it("a tool call's other arguments are tool-calls, naming the argument, not structure", async () => {
    const r = await report('base', 'tool-args');
    for (const e of Object.values(byProvider(r))) {
      expect(e.classes).toEqual(['tool-calls']);
      expect(e.details.toolCalls).toEqual([expect.objectContaining({ change: 'arguments', name: 'get_weather', changes: [{ path: 'city', kind: 'value', old: 'Paris', new: 'Lyon' }] })]);
      expect(e.summary).toMatch(/get_weather arguments changed \(city: "Paris" -> "Lyon"\)/);
    }
  });

  it('an event the server did not send before stays structure, naming it', async () => {
    const r = await report('base', 'extra-event');
    const e = byProvider(r);
    for (const x of Object.values(e)) expect(x.classes).toEqual(['structure']);
    expect(e.openai.details.structure!.join('\n')).toContain('rate_limits.updated');
    expect(e.gemini.details.structure!.join('\n')).toContain('sessionResumptionUpdate');
    // Taken away again: the other way round, as failing.
    const back = await report('extra-event', 'base');
    expect(back.entries.map((x) => x.primary)).toEqual(['structure', 'structure']);
    expect(back.summary.failing).toBe(2);
  });

  it('a tool call added is structure and tool-calls (added)', async () => {
    const r = await report('base', 'tool-added');
    const e = byProvider(r);
    // OpenAI streams the call as its own events; Gemini sends both calls in one toolCall frame.
    expect(e.openai.classes).toEqual(['structure', 'tool-calls']);
    expect(e.gemini.classes).toEqual(['tool-calls']);
    for (const x of Object.values(e)) expect(x.details.toolCalls).toEqual([expect.objectContaining({ change: 'added', name: 'get_time' })]);
  });

  it('the CLI passes a re-split re-record (exit 0) and fails other words (exit 1, a text line with the word diff)', () => {
    const same = cli(tape('base'), tape('rechunked'));
    expect(same.stderr).toBe('');
    expect(same.status).toBe(0);
    expect(same.stdout).toMatch(/2 pairs \(2 identical\)/);
    const other = cli(tape('base'), tape('reworded'));
    expect(other.status).toBe(1);
    expect(other.stdout).toMatch(/^text\s+reworded\.tape/m);
    expect(other.stdout).toContain('[-said:-]{+told');
  });
});
