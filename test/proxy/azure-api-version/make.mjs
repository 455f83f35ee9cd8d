// Writes versioned.tape in this directory with the build in dist/: Azure OpenAI calls on paths
// other than chat/completions, completions, embeddings and POST /openai/responses, recorded
// with createFetch and `api-version=2024-10-21` by a tapedeck that still filed them under their
// URL with the `api-version` query (commit 4bd75a1). It was run once, at that commit, and must
// not be re-run later: the point of the fixture is that the older code wrote it. Kept to show
// how it was made; expected.json holds the answers the run got.
//
//   npm run build && node test/proxy/azure-api-version/make.mjs
import { rmSync, writeFileSync } from 'node:fs';
import { AzureOpenAI, toFile } from 'openai';
import { createFetch } from '../../../dist/proxy/index.js';
import { azurePathsScript, startFakeAzurePaths } from './fake.mjs';

const dir = new URL('.', import.meta.url).pathname;
const tape = `${dir}versioned.tape`;
rmSync(tape, { force: true });
const fake = await startFakeAzurePaths();
const rec = createFetch({ tape, mode: 'record' });
let out;
try {
  out = await azurePathsScript(AzureOpenAI, toFile, fake.url, '2024-10-21', rec);
} finally {
  await rec.close();
  await fake.close();
}
writeFileSync(`${dir}expected.json`, `${JSON.stringify(out, null, 2)}\n`);
console.log(JSON.stringify(out));
