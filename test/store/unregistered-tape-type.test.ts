// A value of a class registered with registerTapeType is an intact record to every reader. A
// process that has not registered the class (the CLI, a teammate's script) reads the record (the
// tag's payload is plain msgpack), never calls it damage, and prune keeps it; export writes it in
// a form import brings back (with the class registered: an instance); a replay that must hand the
// value over without the class gets E_TAPE_TYPE naming the type, not E_TAPE_DAMAGED.
//
// The tape is written by a child process that registers the class; this process never registers
// it, so what it reads is what a process without the class reads. Uses dist (build first).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { readTape, registerTapeType } from '../../src/store/tape-file.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const store = pathToFileURL(join(root, 'dist/store/index.js')).href;
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-usertype-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tape = join(dir, 'money.tape');
const question = { model: 'm', messages: [{ role: 'user', content: 'price' }] };

const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

/** Runs `body` in a child process where Money is registered as type 7 (`m`: the store module). */
function withMoney(body: string): { status: number | null; stdout: string; stderr: string } {
  const script = `
    const m = await import(${JSON.stringify(store)});
    class Money { constructor(c, a) { this.currency = c; this.amount = a; } }
    m.registerTapeType({ type: 7, name: 'Money', Class: Money, write: (x) => [x.currency, x.amount, new Map([['cents', x.amount * 100]])], read: ([c, a]) => new Money(c, a) });
    ${body}`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });
}

beforeAll(() => {
  const r = withMoney(`
    const c = await m.ReplayCache.open(${JSON.stringify(tape)}, { mode: 'record' });
    await c.put(${JSON.stringify(question)}, { price: new Money('EUR', 12.5), rates: new Map([['EUR', 1]]), when: new Date(0) });
    await c.close();`);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
});

describe('a tape holding a value of a class this process has not registered', () => {
  it('reads as an intact record whose value keeps the type number and the data write() gave', async () => {
    const { records, warnings } = await readTape(tape);
    expect(warnings).toEqual([]);
    expect(records).toHaveLength(1);
    const price = ((records[0]!.value as { value: { price: unknown } }).value.price) as { type: number; value: unknown };
    expect(price.type).toBe(7);
    expect(price.value).toEqual(['EUR', 12.5, new Map([['cents', 1250]])]);
  });

  it('replay gets E_TAPE_TYPE naming the type and the fix, not E_TAPE_DAMAGED', async () => {
    const c = await ReplayCache.open(tape);
    try {
      const err = await c.get(question).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_TAPE_TYPE');
      expect((err as TapedeckError).message).toContain('type 7');
      expect((err as TapedeckError).details.hint).toContain('registerTapeType');
    } finally {
      await c.close();
    }
  });

  it('verify, scan, inspect and tree find nothing wrong', () => {
    const v = cli('verify', 'money.tape');
    expect(v.stdout).not.toMatch(/E_TAPE|damage/);
    expect(v.status).toBe(0);
    const s = cli('scan', 'money.tape');
    expect(s.stdout + s.stderr).not.toMatch(/E_TAPE|damage|prune/);
    expect(s.status).toBe(0);
    const i = cli('inspect', 'money.tape');
    expect(i.stdout + i.stderr).not.toMatch(/E_TAPE|damage/);
    expect(i.status).toBe(0);
    // The tree places conversations; a ReplayCache value is none, but the record is read, not damage.
    const t = cli('tree', 'money.tape');
    expect(t.stdout + t.stderr).toContain('record 0 at byte');
    expect(t.stdout + t.stderr).not.toMatch(/E_TAPE|damage/);
  });

  it('prune keeps the record', async () => {
    const before = readFileSync(tape);
    const p = cli('prune', 'money.tape');
    expect(p.status).toBe(0);
    expect(p.stdout).toContain('kept 1 record');
    expect(readFileSync(tape).equals(before)).toBe(true);
  });

  it('export writes the value by its type number; import without the class gives back the same record bytes', async () => {
    const e = cli('export', 'money.tape');
    expect(e.stderr).toBe('');
    expect(e.status).toBe(0);
    const doc = JSON.parse(e.stdout) as { records: { value: { price: unknown } }[] };
    expect(doc.records[0]!.value.price).toEqual({ $type: 'ext', name: '#7', value: ['EUR', 12.5, { $type: 'map', entries: [['cents', 1250]] }] });
    expect(await exportTapeJSON(tape)).toBe(e.stdout);

    const copy = join(dir, 'copy.tape');
    await importTapeJSON(e.stdout, copy);
    const [a, b] = [await readTape(tape), await readTape(copy)];
    const payload = (t: typeof a, bytes: Buffer) => bytes.subarray(t.records[0]!.offset, t.records[0]!.offset + t.records[0]!.length).toString('hex');
    expect(payload(b, readFileSync(copy))).toBe(payload(a, readFileSync(tape)));

    // A process with the class registered reads the imported record as an instance.
    const r = withMoney(`
      const c = await m.ReplayCache.open(${JSON.stringify(copy)});
      const v = await c.get(${JSON.stringify(question)});
      console.log(v.price instanceof Money, v.price.amount, v.price.currency, v.rates instanceof Map);
      await c.close();`);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('true 12.5 EUR true');
  });

  it('an export made with the class registered names it; import in such a process brings back an instance', () => {
    const r = withMoney(`
      const json = await m.exportTapeJSON(${JSON.stringify(tape)});
      console.log(JSON.stringify(JSON.parse(json).records[0].value.price));
      await m.importTapeJSON(json, ${JSON.stringify(join(dir, 'named.tape'))});
      const c = await m.ReplayCache.open(${JSON.stringify(join(dir, 'named.tape'))});
      const v = await c.get(${JSON.stringify(question)});
      console.log(v.price instanceof Money, v.price.amount);
      await c.close();`);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toEqual(['{"$type":"ext","name":"Money","value":["EUR",12.5,{"$type":"map","entries":[["cents",1250]]}]}', 'true 12.5']);
  });

  it('registerTapeType refuses a name of the form export gives a type by its number', () => {
    class Point {}
    expect(() => registerTapeType({ type: 9, name: '#9', Class: Point, write: () => [], read: () => new Point() })).toThrow(
      expect.objectContaining({ code: 'E_ARG' }),
    );
  });
});

describe('a record run in a process without the class', () => {
  // A record run that re-recorded another request deleted the recording holding the class's
  // value at close, without a word: its rewrite dropped the frame as damage.
  it('keeps the recording holding its value, byte for byte', async () => {
    const copy = join(dir, 'money-rerecord.tape');
    const r = withMoney(`
      const c = await m.ReplayCache.open(${JSON.stringify(copy)}, { mode: 'record' });
      await c.put(${JSON.stringify(question)}, { price: new Money('EUR', 12.5) });
      await c.put({ model: 'm', messages: [{ role: 'user', content: 'other' }] }, 'first');
      await c.close();`);
    expect(r.status, r.stderr).toBe(0);
    const before = (await readTape(copy)).records.map((x) => Buffer.from(JSON.stringify((x.value as { key: string }).key)));
    const rec = await ReplayCache.open(copy, { mode: 'record' });
    try {
      await rec.put({ model: 'm', messages: [{ role: 'user', content: 'other' }] }, 'second');
    } finally {
      await rec.close();
    }
    const { records, warnings } = await readTape(copy);
    expect(warnings).toEqual([]);
    expect(records).toHaveLength(2);
    expect(records.map((x) => Buffer.from(JSON.stringify((x.value as { key: string }).key)))).toEqual(before);
    const back = withMoney(`
      const c = await m.ReplayCache.open(${JSON.stringify(copy)}, { mode: 'replay' });
      const v = await c.get(${JSON.stringify(question)});
      console.log(v.price instanceof Money, v.price.amount);
      await c.close();`);
    expect(back.stdout.trim()).toBe('true 12.5');
  });
});
