// A test's companion MCP tape (tape.mcp(): `<tape>.mcp.tape`) masks secrets under the test
// tape's redaction salt: a tool result holding a credential (server-everything's get-env, with a
// GitHub token in the server's environment) replays with the same keyed mask the model's
// recording was keyed with, so the agent, model and tools, replays offline. With two salts the
// model's next request (built from the replayed tool result) never matched its recording.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTape, scanTape } from '../../src/store/tape-file.ts';
import { newRedactionSalt } from '../../src/store/salt.ts';
import { tmp } from '../mcp/helpers.ts';
import { agent, fakeProvider, TOKEN } from './tool-secret-agent.ts';

const saltOf = async (file: string) => (await scanTape(file)).header.salt;

describe("a test's MCP tape and its tape share one redaction salt", { timeout: 90_000 }, () => {
  it('neither tape exists: recorded, then replayed offline, with one salt and the token on neither tape', async () => {
    const dir = tmp('mcp-salt-new');
    const path = join(dir, 'agent.tape');
    const provider = await fakeProvider();
    const live = await agent('record', path, provider.url);
    await provider.close();
    expect(live).toMatch(/^done: \d+ chars$/);
    const mcpPath = join(dir, 'agent.mcp.tape');
    for (const f of [path, mcpPath]) expect(readFileSync(f).includes(TOKEN), f).toBe(false);
    expect(await agent('replay', path, provider.url)).toBe(live);
    expect(await saltOf(mcpPath)).toBe(await saltOf(path));
  });

  it("the model's tape is made first: the MCP tape takes its salt, and the agent replays", async () => {
    const dir = tmp('mcp-salt-model-first');
    const path = join(dir, 'agent.tape');
    const provider = await fakeProvider();
    const live = await agent('record', path, provider.url, 'model-first');
    await provider.close();
    expect(await saltOf(join(dir, 'agent.mcp.tape'))).toBe(await saltOf(path));
    expect(await agent('replay', path, provider.url, 'model-first')).toBe(live);
  });

  it('a test tape that exists gives its salt to a new MCP tape; an MCP tape that exists gives its salt to a new test tape', async () => {
    const provider = await fakeProvider();
    try {
      for (const first of ['agent.tape', 'agent.mcp.tape']) {
        const dir = tmp('mcp-salt-one-exists');
        const path = join(dir, 'agent.tape');
        const salt = newRedactionSalt();
        await createTape(join(dir, first), { salt });
        const live = await agent('record', path, provider.url);
        expect(await saltOf(path), first).toBe(salt);
        expect(await saltOf(join(dir, 'agent.mcp.tape')), first).toBe(salt);
        // Replay from the recordings (the provider is still up: a miss would not go to it).
        expect(await agent('replay', path, provider.url)).toBe(live);
      }
    } finally {
      await provider.close();
    }
  });

  it('tapes of an older release with two salts are left as they are, and the miss says to record both again together', async () => {
    const dir = tmp('mcp-salt-two');
    const path = join(dir, 'agent.tape');
    const mcpPath = join(dir, 'agent.mcp.tape');
    const [a, b] = [newRedactionSalt(), newRedactionSalt()];
    await createTape(path, { salt: a });
    await createTape(mcpPath, { salt: b });
    const provider = await fakeProvider();
    try {
      await agent('record', path, provider.url);
    } finally {
      await provider.close();
    }
    expect(existsSync(mcpPath)).toBe(true);
    expect([await saltOf(path), await saltOf(mcpPath)]).toEqual([a, b]);
    const miss = await agent('replay', path, provider.url).then(() => undefined, (e: unknown) => e as Error);
    expect(miss?.message).toMatch(/tool result differs/);
    expect(miss?.message).toContain('were recorded with different redaction salts');
    expect(miss?.message).toContain(`delete both (rm ${relative(process.cwd(), path)} ${relative(process.cwd(), mcpPath)}), then record the test again`);
  });
});
