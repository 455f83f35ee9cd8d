// A local stand-in for the Azure OpenAI paths that are not keyed as LLM requests: audio
// transcriptions (multipart) and speech, image generation, files (multipart upload), the models
// list, and a background response polled with GET /openai/responses/{id}. Every path needs an
// `api-version` query (Azure answers 404 without one), and answers say which version they got,
// so a test can tell a replay (the recorded version) from a live call. Used by make.mjs (the
// fixture written by an older tapedeck) and azure-api-version.test.ts.
import { createServer } from 'node:http';

/** Starts the fake on 127.0.0.1, port 0: `{ url, calls, close }`. */
export async function startFakeAzurePaths() {
  const calls = [];
  const polls = new Map();
  const server = createServer(async (req, res) => {
    const parts = [];
    for await (const c of req) parts.push(c);
    const body = Buffer.concat(parts);
    calls.push({ method: req.method, url: req.url });
    const url = new URL(req.url ?? '/', 'http://azure.invalid');
    const version = url.searchParams.get('api-version');
    const json = (status, v) => {
      const s = JSON.stringify(v);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
      res.end(s);
    };
    if (!version) return json(404, { error: { code: '404', message: 'Resource not found' } });
    const p = url.pathname;
    if (req.method === 'POST' && /\/audio\/transcriptions$/.test(p)) return json(200, { text: `heard ${body.length > 0 ? 'audio' : 'nothing'} (${version})` });
    if (req.method === 'POST' && /\/audio\/speech$/.test(p)) {
      const bytes = Buffer.from(`ID3-speech-${version}`);
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': bytes.length });
      return res.end(bytes);
    }
    if (req.method === 'POST' && /\/images\/generations$/.test(p)) return json(200, { created: 1767225600, data: [{ url: `https://img.invalid/cat-${version}.png` }] });
    if (req.method === 'POST' && p === '/openai/files') return json(200, { id: 'file-az1', object: 'file', bytes: 8, created_at: 1767225600, filename: 'b.jsonl', purpose: `batch (${version})`, status: 'processed' });
    if (req.method === 'GET' && p === '/openai/models') return json(200, { object: 'list', data: [{ id: `gpt-4o (${version})`, object: 'model', created: 1767225600, owned_by: 'system' }] });
    if (req.method === 'POST' && p === '/openai/responses') {
      polls.set('resp_az1', 0);
      return json(200, { id: 'resp_az1', object: 'response', created_at: 1767225600, status: 'queued', model: 'dep', output: [], background: true });
    }
    const poll = /^\/openai\/responses\/([^/]+)$/.exec(p);
    if (req.method === 'GET' && poll) {
      const n = (polls.get(poll[1]) ?? 0) + 1;
      polls.set(poll[1], n);
      const done = n >= 2;
      return json(200, {
        id: poll[1],
        object: 'response',
        created_at: 1767225600,
        status: done ? 'completed' : 'in_progress',
        model: 'dep',
        background: true,
        output: done ? [{ type: 'message', id: 'msg_az1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: `polled (${version})`, annotations: [] }] }] : [],
      });
    }
    return json(404, { error: { code: '404', message: 'Resource not found' } });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    calls,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * The calls a run makes with the openai package's AzureOpenAI client (`fetch` given), answers
 * reduced to what a test compares.
 */
export async function azurePathsScript(AzureOpenAI, toFile, endpoint, apiVersion, fetch) {
  const az = new AzureOpenAI({ endpoint, apiKey: 'azure-fixture-key', apiVersion, fetch, maxRetries: 0 });
  const out = {};
  out.transcription = (await az.audio.transcriptions.create({ model: 'whisper-dep', file: await toFile(Buffer.from('RIFF-fixture-audio'), 'a.wav', { type: 'audio/wav' }) })).text;
  out.speech = Buffer.from(await (await az.audio.speech.create({ model: 'tts-dep', voice: 'alloy', input: 'say it' })).arrayBuffer()).toString();
  out.image = (await az.images.generate({ model: 'dalle-dep', prompt: 'a cat' })).data?.[0]?.url;
  out.file = (await az.files.create({ file: await toFile(Buffer.from('{"a":1}\n'), 'b.jsonl'), purpose: 'batch' })).purpose;
  out.models = (await az.models.list()).data.map((m) => m.id);
  let r = await az.responses.create({ model: 'dep', input: 'in the background', background: true });
  const statuses = [r.status];
  while (r.status !== 'completed' && statuses.length < 5) {
    r = await az.responses.retrieve(r.id);
    statuses.push(r.status);
  }
  out.polled = statuses;
  out.answer = r.output_text;
  return out;
}
