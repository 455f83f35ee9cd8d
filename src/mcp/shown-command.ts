/**
 * The server command as tapedeck shows it (the re-record command of a miss, on stderr and in the
 * JSON-RPC error the client gets), with its secrets masked. A server command often carries a
 * credential (`--token ghp_…`, a database URL with its password) and a miss's error message goes
 * to the agent, which hands tool errors to its model: a secret shown there lands in the LLM
 * conversation, and in whatever logs it.
 */
import { redactor, type Redactor } from '../store/redact.ts';
import { secretByLastWord } from '../store/secret-words.ts';

/** What a masked secret is shown as. */
const MASK = '***';

/** A word for a POSIX shell: as it is when safe, else single-quoted. */
const quote = (s: string): string => (/^[\w./:=@%+*-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** `scheme://user:password@`: the password part of a URL's userinfo. */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*):([^\s/?#@]*)@/gi;

/** A query parameter of a URL: `?name=value`, `&name=value`. */
const QUERY_PAIR = /([?&])([^=&#\s]+)=([^&#\s]*)/g;

/** `--name=value`, `-n=value`, `NAME=value` (an environment assignment before the command). */
const ASSIGNMENT = /^(-{0,2}[A-Za-z][\w.-]*)=(.*)$/s;

/** A flag (`-x`, `--name`), not a negative number. */
const isFlag = (w: string): boolean => /^--?[A-Za-z]/.test(w);

let shared: Redactor | undefined;

/**
 * One word of a command with its secrets masked: a URL's password (`user:***@`), secret query
 * parameters (`?token=`), credential-looking text (`ghp_…`, `sk-…`, `Bearer …`), and the value of
 * `--name=value` or `NAME=value` when the name is a secret's (token, password, key, secret, …).
 *
 * @example
 * maskWord('postgresql://admin:S3cretPass@db/app') // 'postgresql://admin:***@db/app'
 * maskWord('--api-key=abc123')                      // '--api-key=***'
 */
export function maskWord(word: string): string {
  const a = ASSIGNMENT.exec(word);
  if (a && a[2] !== '' && secretByLastWord(a[1]!)) return `${a[1]}=${MASK}`;
  // Credential-looking text first (it masks some query parameters its own way), then what only
  // a command line has, in one mask.
  return (shared ??= redactor())
    .text(word)
    .replace(URL_PASSWORD, (_m, head: string) => `${head}:${MASK}@`)
    .replace(QUERY_PAIR, (m, sep: string, name: string) => (secretByLastWord(name) ? `${sep}${name}=${MASK}` : m));
}

/**
 * A command line to show, its words shell-quoted and its secrets masked (see {@link maskWord}):
 * also the word after a flag named like a secret (`--token X`, `--password X`, `--api-key X`,
 * `--key X`, `--secret X`).
 *
 * @example
 * shownCommand(['node', 'server.mjs', '--token', 'abc123', 'postgresql://admin:pw@db/app'])
 * // "node server.mjs --token *** postgresql://admin:***@db/app"
 */
export function shownCommand(words: readonly string[]): string {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const prev = i > 0 ? words[i - 1]! : undefined;
    const afterSecretFlag = prev !== undefined && isFlag(prev) && !prev.includes('=') && secretByLastWord(prev) && !isFlag(w);
    const masked = afterSecretFlag ? MASK : maskWord(w);
    // A masked word is shown as it is (`[REDACTED]`, not quoted): the user puts the secret back.
    out.push(masked === w ? quote(w) : masked);
  }
  return out.join(' ');
}
