// Starts the fake OpenAI API for the run, unless OPENAI_BASE_URL points somewhere already (the
// real API, or a fake some other process runs). Replaying needs no upstream at all: in replay
// mode nothing is sent.
import type { TestProject } from 'vitest/node';
import { startFakeOpenAI } from './fake-openai.ts';

declare module 'vitest' {
  interface ProvidedContext {
    openaiBaseURL: string;
  }
}

export default async function setup(project: TestProject) {
  if (process.env.OPENAI_BASE_URL) {
    project.provide('openaiBaseURL', process.env.OPENAI_BASE_URL);
    return;
  }
  const fake = await startFakeOpenAI();
  project.provide('openaiBaseURL', fake.url);
  return () => fake.close();
}
