// Every code block of README.md, run as a reader would: in a fresh project holding the packed
// tarball (node_modules/.bin linked as npm links them), against a local fake provider. Blocks are
// read from README.md itself, each is claimed by exactly one step below, and a block no step
// claims fails the test, so a new block comes with its test. What a step changes in a block is
// said where it does it: the provider's URL becomes the fake's, and port 8080 a free port.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { pack, root, type Packed } from './packed.ts';

interface Block {
  lang: string;
  text: string;
  line: number;
}

/** The fenced code blocks of a Markdown text, in order. */
function codeBlocks(md: string): Block[] {
  const out: Block[] = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    while (++i < lines.length && !/^```\s*$/.test(lines[i]!)) body.push(lines[i]!);
    out.push({ lang: open[1]!, text: body.join('\n'), line: start + 1 });
  }
  return out;
}

const README = readFileSync(join(root, 'README.md'), 'utf8');
const blocks = codeBlocks(README);
const claimed = new Set<Block>();
/** The one block a step runs: found by what it starts with; claiming one twice is an error. */
function block(lang: string, startsWith: string): Block {
  const found = blocks.filter((b) => b.lang === lang && b.text.startsWith(startsWith));
  expect(found, `README block \`\`\`${lang} starting "${startsWith}"`).toHaveLength(1);
  claimed.add(found[0]!);
  return found[0]!;
}

let p: Packed;
let upstream: Upstream;
let env: NodeJS.ProcessEnv;
const python = process.env.TAPEDECK_PYTHON ?? 'python3';
const hasPythonOpenAI = spawnSync(python, ['-c', 'import openai'], { encoding: 'utf8' }).status === 0;

beforeAll(async () => {
  p = pack();
  upstream = await startUpstream();
  // What `npm install -D llm-tapedeck openai @modelcontextprotocol/server-memory` leaves: the
  // packages (pack() links the SDKs) and their commands in node_modules/.bin.
  const bin = join(p.dir, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  // Both commands the package names (`llm-tapedeck` is what npx runs outside a project).
  for (const name of ['tapedeck', 'llm-tapedeck']) symlinkSync(join('..', 'llm-tapedeck', 'dist', 'cli.js'), join(bin, name));
  chmodSync(join(p.pkg, 'dist', 'cli.js'), 0o755); // npm makes a package's bins executable
  mkdirSync(join(p.dir, 'node_modules', '@modelcontextprotocol'), { recursive: true });
  symlinkSync(join(root, 'node_modules', '@modelcontextprotocol', 'server-memory'), join(p.dir, 'node_modules', '@modelcontextprotocol', 'server-memory'), 'dir');
  symlinkSync(join('..', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js'), join(bin, 'mcp-server-memory'));
  writeFileSync(join(p.dir, 'package.json'), JSON.stringify({ name: 'readme-reader', private: true, devDependencies: { 'llm-tapedeck': '*', openai: '*', '@modelcontextprotocol/server-memory': '*' } }));
  // The fake provider stands in for api.openai.com: the OpenAI SDK reads OPENAI_BASE_URL.
  env = { PATH: process.env.PATH, HOME: p.dir, OPENAI_API_KEY: 'sk-test-key', OPENAI_BASE_URL: `${upstream.url}/v1`, MEMORY_FILE_PATH: join(p.dir, 'memory.jsonl'), npm_config_update_notifier: 'false', npm_config_offline: 'true' }; // npx must never fetch
}, 120_000);
afterAll(async () => {
  await upstream?.close();
  p?.remove();
});

/**
 * Runs a shell block's commands (comments and line continuations as sh reads them).
 * Asynchronous: the fake provider runs in this process and must answer while the commands run.
 */
function sh(text: string, extra: NodeJS.ProcessEnv = {}, command = 'sh', args = ['-c', text]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: p.dir, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not answer`);
}

/** Ctrl-C: SIGINT to the command's process group (npx and the tapedeck process it starts). */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid!, 'SIGINT');
  await done;
}

describe('README.md: every code block runs', () => {
  it('the README is a front page of at most 300 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('quick start: install, chat.mjs recorded once and replayed, a miss as shown, tapedeck init', { timeout: 60_000 }, async () => {
    // Installing is what pack() did, from the packed tarball; the block is the one that says so.
    expect(block('sh', 'npm install -D llm-tapedeck openai').text).toBe('npm install -D llm-tapedeck openai');
    writeFileSync(join(p.dir, 'chat.mjs'), block('js', '// chat.mjs').text);
    const [recordLine, replayLine] = block('sh', 'TAPEDECK_MODE=record node chat.mjs').text.split('\n');
    const before = upstream.calls.length;
    const rec = await sh(recordLine!);
    expect(rec.stderr).toBe('');
    expect(rec.stdout).toMatch(/^Echo \d+: Hi\n$/);
    expect(upstream.calls.length - before).toBe(1);
    // Replay with the provider unreachable: the answer comes from the tape.
    const rep = await sh(replayLine!, { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(rep.stderr).toBe('');
    expect(rep.stdout).toBe(rec.stdout);

    // "Change 'Hi' to 'Hello' in chat.mjs and run node chat.mjs again": the lines the README shows.
    const miss = block('', 'BadRequestError: 400 tapedeck miss');
    writeFileSync(join(p.dir, 'chat.mjs'), readFileSync(join(p.dir, 'chat.mjs'), 'utf8').replace("content: 'Hi'", "content: 'Hello'"));
    const r = await sh('node chat.mjs', { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(r.status).not.toBe(0);
    for (const line of miss.text.split('\n')) expect(r.stderr).toContain(line);

    const init = block('sh', 'npx llm-tapedeck init');
    execFileSync('git', ['init', '-q', p.dir]);
    const out = await sh(init.text);
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
    expect(readFileSync(join(p.dir, '.gitattributes'), 'utf8')).toContain('*.tape diff=tapedeck');
    expect(readFileSync(join(p.dir, '.git', 'hooks', 'pre-commit'), 'utf8')).toContain('tapedeck scan --staged');
  });

  it('the proxy: serve records what curl and openai-python send, and replays it without the provider', async () => {
    const port = await freePort();
    const onPort = (b: Block) => b.text.replaceAll('8080', String(port));
    const serve = onPort(block('sh', 'npx llm-tapedeck serve')).replace('https://api.openai.com', upstream.url);
    const curl = onPort(block('sh', 'curl http://127.0.0.1:8080'));
    const py = onPort(block('python', 'from openai import OpenAI'));
    const runPython = () => sh(py, { OPENAI_BASE_URL: '' }, python, ['-c', py]);

    let child = spawn('sh', ['-c', `exec ${serve}`], { cwd: p.dir, env, stdio: 'ignore', detached: true });
    try {
      await waitFor(`http://127.0.0.1:${port}/__tapedeck/health`);
      const recorded = await sh(curl);
      expect(recorded.status).toBe(0);
      expect(JSON.parse(recorded.stdout).choices[0].message.content).toMatch(/^Echo \d+: Hi$/);
      const pyRecorded = hasPythonOpenAI ? await runPython() : undefined;
      if (pyRecorded) expect(pyRecorded.stdout).toMatch(/^Echo \d+: Hi\n$/);
      await stop(child);
      // "Restart it without --mode record": the upstream is gone, the tape answers.
      child = spawn('sh', ['-c', `exec ${serve.replace(' --mode record', '').replace(upstream.url, 'http://127.0.0.1:9')}`], { cwd: p.dir, env, stdio: 'ignore', detached: true });
      await waitFor(`http://127.0.0.1:${port}/__tapedeck/health`);
      const replayed = await sh(curl);
      expect(JSON.parse(replayed.stdout).choices[0].message.content).toBe(JSON.parse(recorded.stdout).choices[0].message.content);
      if (pyRecorded) expect((await runPython()).stdout).toBe(pyRecorded.stdout);
      else console.warn('README python block not run: install openai-python (pip install openai) or set TAPEDECK_PYTHON');
    } finally {
      await stop(child);
    }
  }, 60_000);

  it('MCP: tapedeck mcp records the memory server, then replays without it', async () => {
    const [recordLine, replayLine] = block('sh', 'npx llm-tapedeck mcp').text.split('\n').map((l) => l.replace(/\s+#.*$/, ''));
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'readme', version: '1.0.0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read_graph', arguments: {} } },
    ];
    /** Sends the messages one at a time, each after the answer to the one before. */
    const converse = async (line: string): Promise<unknown[]> => {
      const child = spawn('sh', ['-c', `exec ${line}`], { cwd: p.dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
      const answers: unknown[] = [];
      let buf = '';
      let waiting: (() => void) | undefined;
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        buf += d;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          answers.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
          waiting?.();
        }
      });
      for (const m of messages) {
        const want = answers.length + ('id' in m ? 1 : 0);
        child.stdin.write(JSON.stringify(m) + '\n');
        while (answers.length < want) await new Promise<void>((r) => ((waiting = r), setTimeout(r, 100)));
      }
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin.end();
      await exited;
      return answers;
    };
    const recorded = await converse(recordLine!);
    expect(recorded).toHaveLength(3);
    expect((recorded[1] as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name)).toContain('read_graph');
    expect(existsSync(join(p.dir, 'tapes', 'memory.tape'))).toBe(true);
    // Replay: the server's command is gone, so starting it would fail.
    rmSync(join(p.dir, 'node_modules', '.bin', 'mcp-server-memory'));
    expect(await converse(replayLine!)).toEqual(recorded);
  }, 60_000);

  it('no code block is left unrun', () => {
    const unrun = blocks.filter((b) => !claimed.has(b)).map((b) => `README.md:${b.line} \`\`\`${b.lang}`);
    expect(unrun).toEqual([]);
  });
});
