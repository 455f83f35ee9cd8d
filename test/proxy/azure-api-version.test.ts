// Azure OpenAI's `api-version` is in no route a recording is filed under, on every /openai/ path:
// transcriptions (multipart), speech, images, files, the models list and a background response
// polled with GET /openai/responses/{id}, not only chat/completions, completions, embeddings and
// POST /openai/responses. Recorded with one version (createFetch and the proxy), they replay
// for a bumped one; a tape an older tapedeck wrote (azure-api-version/versioned.tape, recorded
// at commit 4bd75a1 with the version in those routes) still replays, for its version and a newer.
import { AzureOpenAI, toFile } from 'openai';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordingUrl } from '../../src/providers/index.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
// @ts-expect-error: a plain ES module shared with make.mjs (no declarations)
import { azurePathsScript, startFakeAzurePaths } from './azure-api-version/fake.mjs';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-azure-version-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fixture = join(import.meta.dirname, 'azure-api-version');
const expected = JSON.parse(readFileSync(join(fixture, 'expected.json'), 'utf8')) as Record<string, unknown>;
type Out = Record<string, unknown>;
const script = (endpoint: string, version: string, f?: typeof fetch): Promise<Out> => azurePathsScript(AzureOpenAI, toFile, endpoint, version, f);

describe('recordingUrl on Azure paths no route keys', () => {
  it('leaves api-version out of every /openai/ path, and out of no other', () => {
    const v = 'api-version=2024-10-21';
    for (const [method, path] of [
      ['POST', '/openai/deployments/whisper/audio/transcriptions'],
      ['POST', '/openai/deployments/tts/audio/speech'],
      ['POST', '/openai/deployments/dalle/images/generations'],
      ['POST', '/openai/files'],
      ['GET', '/openai/files/file-1/content'],
      ['GET', '/openai/models'],
      ['GET', '/openai/responses/resp_1'],
      ['POST', '/openai/v1/audio/transcriptions'],
    ]) {
      expect(recordingUrl({ method, url: `${path}?${v}` }), path).toBe(path);
      expect(recordingUrl({ method, url: `${path}?limit=2&${v}` }), path).toBe(`${path}?limit=2`);
    }
    // Other providers' URLs are filed as sent, a query named api-version included.
    for (const url of [`/v1/audio/transcriptions?${v}`, `/v1/models?${v}`, `/v1/responses/resp_1?${v}`, `/v1beta/models/g:generateContent?${v}`]) expect(recordingUrl({ method: 'GET', url })).toBe(url);
  });
});

describe('Azure OpenAI calls beyond chat, recorded with one api-version', () => {
  it('replay for a bumped one (createFetch)', async () => {
    const tape = join(dir, 'fetch.tape');
    const fake = await startFakeAzurePaths();
    const rec = createFetch({ tape, mode: 'record' });
    let recorded: Out;
    try {
      recorded = await script(fake.url, '2024-10-21', rec);
    } finally {
      await rec.close();
      await fake.close();
    }
    expect(recorded).toEqual(expected);
    const routes = (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord).map((r) => r.route);
    expect(routes.filter((r) => r.includes('api-version'))).toEqual([]);
    for (const version of ['2024-10-21', '2025-04-01-preview']) {
      const play = createFetch({ tape, mode: 'replay' });
      try {
        expect(await script('http://127.0.0.1:9', version, play), version).toEqual(expected);
      } finally {
        await play.close();
      }
    }
  });

  it('replay for a bumped one (the proxy)', async () => {
    const tape = join(dir, 'proxy.tape');
    const fake = await startFakeAzurePaths();
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    let recorded: Out;
    try {
      recorded = await script(proxy.url, '2024-10-21');
    } finally {
      await proxy.close();
      await fake.close();
    }
    expect(recorded).toEqual(expected);
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      expect(await script(play.url, '2025-04-01-preview')).toEqual(expected);
    } finally {
      await play.close();
    }
  });
});

describe('a tape an older tapedeck wrote with api-version in these routes', () => {
  it('is what it says: recorded with the version in the routes of the calls beyond chat', async () => {
    const routes = (await readTape(join(fixture, 'versioned.tape'))).records.map((r) => r.value).filter(isHttpRecord).map((r) => r.route);
    expect(routes).toContain('GET /openai/responses/resp_az1?api-version=2024-10-21');
    expect(routes).toContain('POST /openai/files?api-version=2024-10-21');
  });

  for (const version of ['2024-10-21', '2025-04-01-preview']) {
    it(`still replays for ${version}`, async () => {
      const tape = join(dir, `older-${version}.tape`);
      copyFileSync(join(fixture, 'versioned.tape'), tape);
      const play = createFetch({ tape, mode: 'replay' });
      try {
        expect(await script('http://127.0.0.1:9', version, play)).toEqual(expected);
      } finally {
        await play.close();
      }
    });
  }
});
