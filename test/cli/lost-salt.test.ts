// A damaged tape header takes the tape's redaction salt with it. Records that hold keyed masks
// (`[REDACTED:…]`, made under that salt) stay intact as records but no longer match a live request
// with those values; verify called them intact and "ok" after prune, and prune's fresh header
// (a new salt) made it final, silently. Both now say so, naming how many records are affected.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-lost-salt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tapedeck = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8' });

describe('a tape whose header is damaged', () => {
  it('verify and prune say the salt is lost with it and how many records hold keyed masks', async () => {
    const tape = join(dir, 'salted.tape');
    await createTape(tape, { salt: '00112233445566778899aabbccddeeff' });
    const masked = chatRecord(2);
    masked.request.url += '?token=%5BREDACTED%3A0123456789abcdef%5D';
    const inBody = chatRecord(3);
    inBody.request.body.messages[0]!.content = 'my password is [REDACTED:0123456789abcdef]';
    await appendRecords(tape, [chatRecord(1), masked, inBody]);
    const bytes = readFileSync(tape);
    // Inside the salt itself (its CRC fails and it is no longer hex): a salt that still reads
    // whole is kept (test/store/header-salt-recovered.test.ts).
    const inSalt = bytes.indexOf('00112233445566778899aabbccddeeff') + 4;
    bytes[inSalt] = bytes[inSalt]! ^ 0xff;
    writeFileSync(tape, bytes);

    const v = tapedeck('verify', tape);
    expect(v.status).toBe(1);
    expect(v.stdout).toContain('E_TAPE_HEADER');
    expect(v.stdout).toContain("The header held the tape's redaction salt, lost with it: 2 records hold values masked under it");
    const p = tapedeck('prune', tape);
    expect(p.status, p.stderr).toBe(0);
    expect(p.stdout).toContain('kept 3 records');
    expect(p.stdout).toContain('2 records hold values masked under it');
    // The fresh header's tape verifies: nothing left to say about a salt it never had.
    expect(tapedeck('verify', tape).stdout).toContain('ok');
  });

  it('a header lost on a tape without keyed masks says nothing of a salt', async () => {
    const tape = join(dir, 'plain.tape');
    await createTape(tape, { salt: '00112233445566778899aabbccddeeff' });
    await appendRecords(tape, [chatRecord(1)]);
    const bytes = readFileSync(tape);
    const inSalt = bytes.indexOf('00112233445566778899aabbccddeeff') + 4;
    bytes[inSalt] = bytes[inSalt]! ^ 0xff;
    writeFileSync(tape, bytes);
    expect(tapedeck('verify', tape).stdout).not.toContain('redaction salt');
  });
});
