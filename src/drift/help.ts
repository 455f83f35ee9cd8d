// Help text of the drift commands, in one place (`tapedeck diff --help`, `tapedeck stats --help`
// and their lines in `tapedeck --help`).

import { PRICES_DATE } from './prices.ts';

/** Lines for the command list of `tapedeck --help`. */
export const DRIFT_COMMANDS = `  diff <old> <new> | diff <tape-or-folder> [--git REV]
                        What changed in the answers between two tapes, two folders
                        of tapes, or tapes and their committed version (docs/drift.md)
  stats <tapes...>      Calls, tokens and the estimated cost of replaying them live
  rerecord <tape> (--yes | --budget USD)
                        Send a tape's requests to the live API again (each to the host
                        it was recorded for), into a new tape, and print the diff
`;

export const DIFF_HELP = `Usage: tapedeck diff <old> <new> [options]
       tapedeck diff <tape-or-folder> [--git REV] [options]

Compares the answers recorded in two tapes, two folders of tapes (paired by their path in the
folder), or tapes and the version committed in git (default HEAD: after a re-record,
\`tapedeck diff tapes/\` shows what the re-record changed). Recordings pair by request; a request
that changed pairs with its closest old recording and the report says what changed in it.
HTTP and ReplayCache recordings, realtime sessions and MCP exchanges are compared; records of
any other kind are counted and said as not compared.

Classes, most severe first: status, structure, tool-calls, finish, text, stream, benign,
identical (docs/drift.md says what each means).

  --git REV              compare with the version committed at REV (one path only; default HEAD)
  --format F             terminal (default; colour on a terminal unless NO_COLOR), markdown, json
  --html FILE            also write a self-contained HTML report (filter by class, side by side)
  --fail-on LIST         classes that fail, comma-separated (default: status,structure,
                         tool-calls,finish,text,stream); also added, removed; none: never fail
  --usage-tolerance R    relative token usage change that is still noise (default 0.2)

Exit codes: 0 nothing in --fail-on changed, 1 something did, 2 bad input or usage (also a
tape with a recording lost to damage: the report leaves it out, so it is no pass).

Examples:
  tapedeck diff tapes/                                   # re-recorded tapes against HEAD
  tapedeck diff tapes/chat.tape --git origin/main --format markdown > drift.md
  tapedeck diff old.tape new.tape --html drift.html --fail-on tool-calls,structure,status
`;

export const STATS_HELP = `Usage: tapedeck stats <tape-or-folder...> [--prices FILE] [--format json]

Per provider and model: recorded calls, tokens in and out, the estimated cost of making the
calls live (list prices per million tokens from a built-in table of ${PRICES_DATE}; prices
change: --prices FILE with newer ones overrides or adds models), and the recorded time replay
saves. Every provider's answers are counted: OpenAI, Anthropic, Gemini, Bedrock, Ollama, Azure,
and OpenAI-compatible APIs under their own names where their answers say who they are.
Realtime sessions and MCP exchanges (per call, with their errors) have tables of their own.

  --prices FILE   JSON { "model": { "input": USD per 1M tokens, "output": USD per 1M tokens } }
  --format F      terminal (default) or json

Exit codes: 0, or 2 for bad input: a tape that cannot be read, or one with a recording lost to
damage (the counts leave it out; tapedeck verify lists the damage).
`;

export const RERECORD_HELP = `Usage: tapedeck rerecord <tape> [--upstream URL | --hostless-upstream URL] (--yes | --budget USD) [options]

Sends the tape's recorded requests (those of createFetch and tapedeck serve) to the live API
again, each to the host its recording was made for (under the path prefix of the upstream
tapedeck serve forwarded it to, if any), records the answers into a new tape, and prints the
diff (as tapedeck diff). The tape it reads is never written. The new tape holds every record of
it, under its redaction salt: each answer re-recorded in the place of the old one, every other
record (not picked, not HTTP, a call that failed) carried over as it was. Before any call it prints how many
requests go to which host and their estimated cost (recorded usage at list prices); nothing is
sent without --yes or --budget. It ends with the commands that show the diff again
(tapedeck diff <tape> <new tape>), adopt the new tape (mv it over the tape, then commit) or
drop it.

  --upstream URL       send every request to this base URL instead (the recorded paths are
                       appended; the new recordings are made for its host, under its
                       path). Refused for recordings of several hosts
  --hostless-upstream URL
                       send the requests of recordings that name no host (tapes written
                       before hosts were stored, hand-written ones) to this base URL, as
                       --upstream would, and every other one to the host it was recorded
                       for: a tape that mixes them is done in one run. Not with --upstream
  --yes                make the calls
  --budget USD         make the calls, but none that would take the estimated spending past USD
  --only TEXT          only the requests whose route, host, model or body contain TEXT
                       (--only api.groq.com: one host's)
  --only-hostless      only the requests of recordings that name no host (with --only: those
                       that also contain TEXT)
  --out FILE           the new tape (default <tape>.rerecorded.tape, a draft that diff,
                       stats and the vitest summary leave out of a folder of tapes until
                       you move it into place; --force replaces it)
  --concurrency N      calls at once (default 4)
  --retries N          retries of a 429 / 529 answer, waiting as retry-after says (default 5)
  --header "N: V"      a header to send where the tape has a redacted one (repeatable);
                       OPENAI_API_KEY, ANTHROPIC_API_KEY, AZURE_OPENAI_API_KEY fill the usual ones,
                       GEMINI_API_KEY (or GOOGLE_API_KEY) Gemini's ?key= and x-goog-api-key,
                       each for its provider's own host, this machine, or --upstream only
                       (--hostless-upstream: for the requests it is sent, not the others)
  --prices FILE        prices for the estimate (see tapedeck stats --help)
  --format F, --html FILE, --fail-on LIST   the diff's output, as tapedeck diff

A hand-written recording (tapedeck add: a 429, a cut stream) is not sent either: it is kept as
it is, as a record run keeps it. A request holding a secret the tape keeps masked (a key in a
prompt, a session_token member) is not sent (the API would get the mask, not the secret): its recording is kept and listed;
record it again by running the application with TAPEDECK_MODE=record. An answer that is an
error, or a stream cut before its end, is not recorded: the old recording is kept. Exit codes:
0 / 1 as tapedeck diff, 2 bad input or no --yes/--budget, 3 when the budget stopped it or
calls failed (their old recordings are kept in the new tape).

Examples:
  OPENAI_API_KEY=sk-... tapedeck rerecord tapes/chat.tape --budget 0.50
  OPENAI_API_KEY=sk-... tapedeck rerecord tapes/mixed.tape --hostless-upstream https://api.openai.com --yes
`;
