import { createOpenAI } from '@ai-sdk/openai';
import { streamText, generateText } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
const status = Number(process.argv[2] ?? 404);
const f = async (url, init) => new Response(JSON.stringify({ error: { message: 'tapedeck miss: text differs; re-record', type: 'tapedeck_miss', param: null, code: 'E_MISS' } }), { status, headers: { 'content-type': 'application/json', 'x-should-retry': 'false' } });
const p = createOpenAI({ apiKey: 'k', fetch: f, baseURL: 'http://x/v1' });
try { await generateText({ model: p('gpt-4o-mini'), prompt: 'hi', maxRetries: 0 }); } catch (e) { console.log('generateText:', e.constructor.name, JSON.stringify(e.message)); }
const r = streamText({ model: p('gpt-4o-mini'), prompt: 'hi', maxRetries: 0 });
try { for await (const t of r.textStream) console.log('t', t); console.log('textStream ended'); } catch (e) { console.log('textStream threw', e.constructor.name, e.message); }
try { console.log(await r.text); } catch (e) { console.log('text:', e.constructor.name, JSON.stringify(e.message), e.cause?.message); }
const lc = new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'k', configuration: { baseURL: 'http://x/v1', fetch: f }, maxRetries: 0 });
try { await lc.invoke('hi'); } catch (e) { console.log('langchain:', e.constructor.name, JSON.stringify(e.message)); }
try { for await (const c of await lc.stream('hi')) ; } catch (e) { console.log('langchain stream:', e.constructor.name, JSON.stringify(e.message)); }
