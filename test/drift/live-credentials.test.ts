// rerecord sends each request to the host its recording names: a key from the environment goes
// to its own provider's host, this machine, or the --upstream the command line names, never to
// another host that speaks the same API (OPENAI_API_KEY to api.groq.com).
import { describe, expect, it } from 'vitest';
import { credentialsFrom } from '../../src/drift/live-credentials.ts';

const env = { OPENAI_API_KEY: 'sk-openai', ANTHROPIC_API_KEY: 'sk-ant', AZURE_OPENAI_API_KEY: 'az', GEMINI_API_KEY: 'gm' };
const chat = 'POST /v1/chat/completions';

describe('credentialsFrom', () => {
  it("fills a key for its provider's host and this machine, not for another host", () => {
    const c = credentialsFrom(env, [], false);
    expect(c(chat, 'authorization', 'https://api.openai.com')).toBe('Bearer sk-openai');
    expect(c(chat, 'authorization', 'http://127.0.0.1:8080')).toBe('Bearer sk-openai');
    expect(c(chat, 'authorization', 'http://localhost:5173')).toBe('Bearer sk-openai');
    expect(c(chat, 'authorization', 'https://api.groq.com')).toBeUndefined();
    expect(c('POST /v1/messages', 'x-api-key', 'https://api.anthropic.com')).toBe('sk-ant');
    expect(c('POST /v1/messages', 'x-api-key', 'https://api.openai.com')).toBeUndefined();
    expect(c('POST /openai/deployments/d/chat/completions', 'api-key', 'https://me.openai.azure.com')).toBe('az');
    expect(c('POST /v1beta/models/g:generateContent', '?key', 'https://generativelanguage.googleapis.com')).toBe('gm');
    expect(c('POST /v1beta/models/g:generateContent', '?key', 'https://evil.example')).toBeUndefined();
  });

  it('fills it for any host --upstream names, and --header values everywhere', () => {
    expect(credentialsFrom(env, [], true)(chat, 'authorization', 'https://gateway.example/openai')).toBe('Bearer sk-openai');
    const c = credentialsFrom(env, ['Authorization: Bearer gsk-groq'], false);
    expect(c(chat, 'authorization', 'https://api.groq.com')).toBe('Bearer gsk-groq');
  });
});
