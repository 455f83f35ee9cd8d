// The command `tapedeck rerecord` prints when recordings name no host to send their requests to
// (tapes recorded before records kept their host, or hand-written with a path alone). It is
// built from the command the user ran: their tape, their --yes or --budget, and the public host
// of the API the recordings' routes belong to. A fixed example (another tape's name, OpenAI's
// host whatever the tape held) re-recorded the wrong file when copied, or sent an Anthropic
// tape's requests to api.openai.com, with ANTHROPIC_API_KEY, since a named --upstream is sent
// the environment's keys.

/** Route paths of the APIs with one public host, and that host. */
const API_HOSTS: readonly (readonly [RegExp, string])[] = [
  [/^\/v1\/(messages|complete)\b/, 'https://api.anthropic.com'],
  [/^\/v1(beta|alpha)?\/(models|tunedModels)\//, 'https://generativelanguage.googleapis.com'],
  [/^\/v1\/(chat\/completions|completions|responses|embeddings|audio|images|moderations)\b/, 'https://api.openai.com'],
  [/^\/api\/(chat|generate|embed|embeddings)\b/, 'http://localhost:11434'],
];

/**
 * The public base URL of the API a recorded route (`POST /v1/messages`) belongs to, or undefined
 * when no one host serves it (Azure's per-resource hosts, Bedrock's per-region ones, a route of
 * your own).
 *
 * @example
 * apiHostOf('POST /v1/messages')         // 'https://api.anthropic.com'
 * apiHostOf('POST /v1/chat/completions') // 'https://api.openai.com'
 * apiHostOf('POST /openai/deployments/gpt4/chat/completions') // undefined
 */
export function apiHostOf(route: string): string | undefined {
  const path = route.slice(route.indexOf(' ') + 1).split('?')[0]!;
  return API_HOSTS.find(([re]) => re.test(path))?.[1];
}

/**
 * A command-line argument as a shell reads it back: quoted when it holds anything but plain path
 * characters.
 *
 * @example
 * shellArg('tapes/chat.tape') // 'tapes/chat.tape'
 * shellArg('my tapes/chat.tape') // "'my tapes/chat.tape'"
 */
export const shellArg = (s: string): string => (/^[\w./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * The rerecord command to run for recordings that name no host: `flag` (`--upstream` when all of
 * them name none, `--hostless-upstream` when some do) set to the host of their API when their
 * routes name one, with the tape, --only, --out and --yes / --budget the user gave (else a
 * budget). --header is left out: its value is a credential.
 *
 * @example
 * hostlessCommand('tapes/claude.tape', ['POST /v1/messages'], '--upstream', { yes: true })
 * // 'tapedeck rerecord tapes/claude.tape --upstream https://api.anthropic.com --yes'
 * hostlessCommand('t.tape', ['POST /openai/deployments/d/chat/completions'], '--upstream', { budget: '2' })
 * // 'tapedeck rerecord t.tape --upstream <base URL of the API they were recorded from> --budget 2'
 */
export function hostlessCommand(tape: string, routes: readonly string[], flag: '--upstream' | '--hostless-upstream', given: { yes?: boolean; budget?: string; only?: string; out?: string }): string {
  const spend = given.yes ? '--yes' : `--budget ${given.budget !== undefined ? shellArg(given.budget) : '0.50'}`;
  // What picks the requests and where they go, as given: the command re-records what was asked.
  const head = `tapedeck rerecord ${shellArg(tape)}${given.only !== undefined ? ` --only ${shellArg(given.only)}` : ''} ${flag}`;
  const tail = `${spend}${given.out !== undefined ? ` --out ${shellArg(given.out)}` : ''}`;
  const placeholder = `${head} <base URL of the API they were recorded from> ${tail}`;
  const hosts = new Set<string>();
  for (const r of routes) {
    const h = apiHostOf(r);
    // A route the table does not know: no one host can be said for all of them.
    if (h === undefined) return placeholder;
    hosts.add(h);
  }
  const [only, ...others] = [...hosts];
  if (only !== undefined && others.length === 0) return `${head} ${only} ${tail}`;
  // Several APIs' recordings: one URL serves only one of them (--only picks one API's).
  return hosts.size > 1 ? `${placeholder} (they are of ${hosts.size} APIs, ${[...hosts].join(', ')}: one at a time, with --only and its path)` : placeholder;
}
