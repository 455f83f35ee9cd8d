// addRecordings value checks: a function anywhere in a body is refused naming where it is (as a
// BigInt or a cycle is), and a status that is not a number from 100 to 599 is quoted as given.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { addRecordings, type WrittenRecording } from '../../src/proxy/hand-written.ts';
import { rejectionOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-written-values-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const URL_ = 'https://api.openai.com/v1/chat/completions';
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] };
const completion = (content: unknown) => ({ id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });

describe('addRecordings value checks', () => {
  it('a function nested in the answer or the request body is refused, naming where it is; nothing is written', async () => {
    const tape = join(dir, 'fn.tape');
    const inAnswer = await rejectionOf(addRecordings({ tape }, [{ request: { url: URL_, body: ask }, response: { body: completion(() => 'Hi') } }]));
    expect(inAnswer).toBeInstanceOf(TapedeckError);
    expect((inAnswer as TapedeckError).code).toBe('E_RECORDING');
    expect((inAnswer as TapedeckError).message).toContain('`response.body.choices[0].message.content` is a function');
    const inRequest = await rejectionOf(addRecordings({ tape }, [{ request: { url: URL_, body: { ...ask, user: () => 'u' } }, response: { body: completion('Hi') } }]));
    expect((inRequest as TapedeckError).code).toBe('E_RECORDING');
    expect((inRequest as TapedeckError).message).toContain('`request.body.user` is a function');
    expect(existsSync(tape)).toBe(false);
  });

  it('a NaN status is quoted as NaN, not as null', async () => {
    const tape = join(dir, 'nan.tape');
    const e = await rejectionOf(addRecordings({ tape }, [{ request: { url: URL_, body: ask }, response: { status: Number('x'), body: completion('Hi') } } as WrittenRecording]));
    expect((e as TapedeckError).code).toBe('E_RECORDING');
    expect((e as TapedeckError).message).toContain('`response.status` NaN is not an HTTP status');
  });
});
