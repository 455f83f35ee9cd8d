// A tape is reviewed as JSON and its recordings' origins are whatever the file says: a key from
// the environment follows a request to its provider's host only over https (or to this machine),
// never in clear to `http://api.openai.com`, where anyone on the path would read it.
import { describe, expect, it } from 'vitest';
import { credentialsFrom } from '../../src/drift/live-credentials.ts';

const env = { OPENAI_API_KEY: 'sk-openai', ANTHROPIC_API_KEY: 'sk-ant', AZURE_OPENAI_API_KEY: 'az', GEMINI_API_KEY: 'gm' };
const chat = 'POST /v1/chat/completions';

describe('rerecord keys and cleartext origins', () => {
  it("sends no environment key to a provider's host over http", () => {
    const c = credentialsFrom(env, [], false);
    expect(c(chat, 'authorization', 'http://api.openai.com')).toBeUndefined();
    expect(c('POST /v1/messages', 'x-api-key', 'http://api.anthropic.com')).toBeUndefined();
    expect(c('POST /openai/deployments/d/chat/completions', 'api-key', 'http://me.openai.azure.com')).toBeUndefined();
    expect(c('POST /v1beta/models/g:generateContent', '?key', 'http://generativelanguage.googleapis.com')).toBeUndefined();
  });

  it('still sends it over https, to this machine, and where the command line named', () => {
    const c = credentialsFrom(env, [], false);
    expect(c(chat, 'authorization', 'https://api.openai.com')).toBe('Bearer sk-openai');
    expect(c(chat, 'authorization', 'http://127.0.0.1:8080')).toBe('Bearer sk-openai');
    expect(credentialsFrom(env, [], true)(chat, 'authorization', 'http://gateway.internal')).toBe('Bearer sk-openai');
  });
});
