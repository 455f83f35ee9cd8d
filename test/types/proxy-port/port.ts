// startProxy's port as docs/api.md gives it: a number, or a string of digits read from the
// environment (the runtime takes both).
import { startProxy, type ServeOptions } from '../../../src/proxy/index.ts';

export async function fromEnvironment(): Promise<void> {
  const proxy = await startProxy({ tape: 'chat.tape', upstream: 'https://api.openai.com', port: process.env.PORT ?? '8080' });
  await proxy.close();
}

export const numeric: ServeOptions = { tape: 'chat.tape', port: 0 };
