// Help for each command of `tapedeck`, one entry per command: `tapedeck <command> --help` and
// `tapedeck help <command>` print it. A new command adds its entry here (serve, tree, push and
// pull print their own, next to their option parsers).

/** Usage, what the command does, its options and an example, per command name. */
export const COMMAND_HELP: Readonly<Record<string, string>> = {
  canonical: `Usage: tapedeck canonical [file] [--ignore k1,k2]

Print the RFC 8785 canonical form of a JSON document (a file, or stdin when the file is
missing or -). With a terminal on stdin, - reads what you type (end it with Ctrl-D).

Options:
  --ignore <k1,k2>   Drop these object members, at any depth, first

Example:
  tapedeck canonical request.json
`,
  hash: `Usage: tapedeck hash [file] [--ignore k1,k2]

Print the SHA-256 digest (64 hex characters) of the canonical form of a JSON document (a file,
or stdin). With a terminal on stdin, - reads what you type (end it with Ctrl-D).

Options:
  --ignore <k1,k2>   Drop these object members, at any depth, first

Example:
  echo '{"b":1,"a":2}' | tapedeck hash
`,
  paths: `Usage: tapedeck paths [file]

Print the message hash and the path hash of each message of a JSON array of messages, or of
the "messages" member of a request object, then the digest of the whole list.

Example:
  tapedeck paths request.json
`,
  key: `Usage: tapedeck key [file] [--ignore a,b] [--route 'POST /path']

Print what the matcher keys an LLM request body by: the provider shape, the request key, the
signature and the hashes of the normalized messages (docs/matching.md).

Options:
  --ignore <a,b>     Request arguments to leave out of the key (like ignoreArgs)
  --route <route>    The method and path the body was sent to (a record's "route" in
                     tapedeck export): Gemini and Bedrock name the model and operation there

Example:
  tapedeck key request.json
  tapedeck key body.json --route 'POST /v1beta/models/gemini-2.5-flash:generateContent'
`,
  verify: `Usage: tapedeck verify <tape-or-folder>...
       tapedeck verify <redis-url> [--namespace NS]

Check a tape file: its header, every record's frame and checksum. Torn tails and damaged
records are reported with their byte offsets. Several tapes, or a folder (every .tape under
it), are each checked and reported, then one line names those with problems (a tape that
cannot be read counts). Exits 1 when a problem is found. With a Redis URL, the same for a
namespace: records that do not read, by their Redis hash and field (tapedeck verify
<redis-url> --help, docs/redis.md).

Examples:
  tapedeck verify recordings/app.tape
  tapedeck verify tapes/
`,
  inspect: `Usage: tapedeck inspect <tape>

List the records of a tape, one a line, tab-separated: offset, size, key, the answer's status
and framing (sse, ndjson, eventstream, ws for a realtime session, or - for a whole body;
", cut" for a stream recorded broken off), signature, model, the first user message, and the
host the recording was made for (origin, e.g. https://api.openai.com, with the upstream's path
prefix after it when the proxy forwarded under one; - for a record that names none: written before hosts were stored, by hand with a path alone, ReplayCache, MCP and
realtime records). Damage is listed after the records, and makes the command exit 1.

Example:
  tapedeck inspect recordings/app.tape | head
`,
  prune: `Usage: tapedeck prune <tape>
       tapedeck prune <redis-url> [--namespace NS]

Compact a tape: drop damaged bytes and records that do not decode (an atomic rewrite under the
tape lock; concurrent appends are kept). With a Redis URL, the same for a namespace
(tapedeck prune <redis-url> --help, docs/redis.md).

Example:
  tapedeck prune recordings/app.tape
`,
  merge: `Usage: tapedeck merge <base> <ours> <theirs> [<path>]

Git's merge driver for tapes (tapedeck init registers it: "merge=tapedeck" in .gitattributes,
merge.tapedeck.driver "... merge %O %A %B %P"): merges two branches' recordings into one tape
instead of a conflict on a binary file, writing the result to <ours> (an atomic rewrite under
the tape lock). <path> is only the name messages use (git's %P).

The merged tape holds the records of <base> both sides kept, then those <ours> added, then
those <theirs> added, each in its order (records are compared by their bytes; one both sides
added is kept once). A base record one side removed (prune, re-record) is left out. The header
is ours; theirs must have the same format version, and the same redaction salt when the
records it adds hold secrets masked under its salt ([REDACTED:<hex>]).

Exit codes:
  0   merged cleanly (one line: records from base, ours, theirs, duplicates, removed)
  1   not merged: the branches created the tape separately and theirs holds secrets masked
      under its own salt (keep one side and re-record the other's calls), different format
      versions, a damaged header
      (nothing written); or an input is damaged: its intact records were merged and written,
      the damage is listed (tapedeck verify), and git keeps the conflict for you to check
  2   usage: not three or four arguments

Example:
  tapedeck merge base.tape ours.tape theirs.tape    # what git runs, with its temporary files
`,
  export: `Usage: tapedeck export <tape> [--json] [--review]
       tapedeck export <tape> --har [--origin URL]

Print a tape as deterministic, pretty JSON (sorted keys, binary as base64), for code review and
diffs. tapedeck import turns it back into the same tape, byte for byte.

With --har, print its HTTP recordings as HAR 1.2 instead, for Chrome devtools and Playwright's
routeFromHAR (not Polly.js, which loads only HAR files it wrote itself): streams as their
event-stream text with timings, binary bodies
base64, secrets still masked. Each URL is on the host its recording was made for; --origin
puts every URL on one scheme and host instead, and is the host of recordings that name none
(tapes written before hosts were stored; default http://localhost). tapedeck import reads the
HAR back.

Options:
  --review           Show each streamed answer as the answer it stands for and its events one
                     per line ({ "$type": "stream", "answer", "events" }) instead of its bytes:
                     what git diff shows after tapedeck init. This form does not import.
  --har              HAR 1.2 instead of tapedeck's JSON (not with --review or --json)
  --origin URL       With --har: the scheme and host of every URL (default: each recording's
                     own, http://localhost for one that names none)
  --textconv         As git's textconv (what tapedeck init configures): a tape that cannot
                     be read is shown as the error's text, and the exit code is always 0, so
                     git diff and git log -p go on past it

A damaged tape is exported as far as it reads: the damage is listed in the output ("warnings",
or the HAR's log._warnings) and on stderr, and the command exits 1 (tapedeck verify shows where,
tapedeck prune drops it). Exit 0: exported whole; 1: damaged, or a tape that cannot be read;
2: usage.

Examples:
  tapedeck export recordings/app.tape > app.tape.json
  tapedeck export --review recordings/app.tape | less
  tapedeck export recordings/app.tape --har --origin https://api.openai.com > app.har
`,
  scan: `Usage: tapedeck scan <tapes or folders...> [--staged]

Look through every record of the tapes (folders: every *.tape below them) for anything that
looks like a credential: bearer and basic tokens, SigV4 signatures, known provider key formats
(sk-, sk-ant-, AIza, gsk_, AKIA, ..., JWTs), and long random-looking values in secret-named members
(api_key, authorization, *_password, *Token, ...), in every header and body, streams included.
Tapes written by older versions, by hand or by importers get the same check as redaction.
Prints each finding with the file, the record (index and byte offset) and the path inside it,
showing only the first characters. Damaged bytes (a record that fails its checksum, a torn
tail, a damaged header) are searched for the key formats as they are and listed with their
byte offsets; a tape with damage is not clean (tapedeck prune <tape> drops the damage).
Exit 0: nothing found; 1: findings, damage, or a tape that cannot be read; 2: usage.

Options:
  --staged           Scan the tapes staged for commit (their staged content), as the
                     pre-commit hook tapedeck init writes does

Example:
  tapedeck scan tapes/
  tapedeck scan --staged
`,
  import: `Usage: tapedeck import <input> <tape> [--force] [--ignore a,b] [--from FORMAT] [--skip-bad]
                       [--redact-header NAME] [--redact-field NAME] [--redact-query NAME]

Write a tape from a tapedeck JSON export (lossless), a directory of JSON recordings (one
request/response per file), a DSPy-style cache.json, or another tool's recordings:
  har        HAR 1.2: Polly.js, Playwright (recordHar), Chrome/Firefox devtools (*.har)
  vcr        VCR.py and pytest-recording YAML cassettes (*.yaml, *.yml)
  nock       nock recorder output (nock.recorder.play() with output_objects, as JSON)
  fixtures   mock-server fixtures: exact rules are imported, matching rules listed
  talkback   talkback tapes: the directory talkback records to, or one tape (*.json5)
Each request is keyed and redacted as if it had been recorded (the summary counts the values
masked, each where it was: a key sent with every request counts once a request); identical
requests keep their order. The input comes first, the tape to write second (one recording a
run); an existing tape is replaced only with --force, and another recording at that path
never. Nothing is written unless every entry imports. docs/migrate.md has a recipe
per tool.

Options:
  --force            Replace an existing tape
  --ignore <a,b>     Request arguments to leave out of the keys
  --from <format>    har | vcr | nock | fixtures | talkback (default: from the name and contents)
  --skip-bad         Import the good entries of a file with malformed ones; list the bad
  --redact-header NAME  Extra header to redact (repeatable), as tapedeck serve takes it
  --redact-field NAME   Extra JSON field to redact (repeatable)
  --redact-query NAME   Extra URL query parameter to redact (repeatable)

Examples:
  tapedeck import app.tape.json recordings/app.tape --force
  tapedeck import recordings/ recordings/app.tape
  tapedeck import recordings/session.har recordings/app.tape
  tapedeck import cassettes/test_chat.yaml recordings/chat.tape --from vcr
  tapedeck import test/tapes/ recordings/app.tape --from talkback
`,
  version: `Usage: tapedeck version

Print the version, the active hashing backend and the Node.js version.
`,
  help: `Usage: tapedeck help [command]

Print the list of commands, or the help of one command (the same as tapedeck <command> --help).
`,
};

/**
 * The hint of a library error that names API options, said as a command line: the `(tapedeck …)`
 * forms it gives in parentheses, or undefined when it has none.
 *
 * @example
 * cliFormsOf("Pass { upstream: 'https://api.openai.com' } (tapedeck serve --upstream URL).") // 'tapedeck serve --upstream URL'
 */
export function cliFormsOf(hint: string): string | undefined {
  const forms = [...hint.matchAll(/\((tapedeck [^)]*)\)/g)].map((m) => m[1]!);
  return forms.length ? forms.join(', or ') : undefined;
}
