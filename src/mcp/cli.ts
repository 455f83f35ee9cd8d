/**
 * `tapedeck mcp`: stands in for an MCP server on stdio, recording or replaying its exchanges.
 * Everything after `--` is the server command (run in record, update and passthrough mode only).
 */
import { parseArgs } from 'node:util';
import { TapedeckError } from '../errors.ts';
import { argsError, dashValues } from '../cli-args.ts';
import { EXIT } from '../cli-errors.ts';
import type { McpTiming } from './session.ts';
import { shownCommand } from './shown-command.ts';
import { parseChaosSpec } from '../chaos/options.ts';
import { runStdio } from './stdio.ts';

export const MCP_HELP = `Usage: tapedeck mcp --tape FILE [options] -- <server command> [args...]

Record and replay an MCP server over stdio. Put this command where the MCP host (an agent,
an IDE's MCP config, a test) starts the server. stdout carries only the protocol; tapedeck
writes its own messages to stderr.

Options:
  --tape FILE           Tape file (created in record and update mode), or redis:// URL
  --mode MODE           replay (default) | record | update | passthrough | once
                        (else TAPEDECK_MODE or CACHE_MODE; once: record when the tape
                        does not exist, else replay). In replay the server command
                        is never run and may be left out
  --strict-order        A call repeated more often than recorded is a miss
                        (default: the last recording answers again)
  --timing T            Replay pacing: none (default) | recorded | <ms between messages>
  --timeout MS          Longest wait for the server's answer to a request (default
                        600000); past it the client gets error -32052, nothing is recorded
  --shutdown-timeout MS Once stdin ends, how long the server's answers still on the way
                        may take; they are recorded (default 2000). A request still
                        unanswered then is warned about and not recorded
  --cancel-grace MS     Replay of a call the client cancelled when recorded: how much
                        longer than recorded the client may take to cancel it again
                        before it is a miss (default 2000)
  --redact-field NAME   Extra JSON field to redact in params and answers (repeatable)
  --volatile-text RE    Leave matches of this regular expression in any string of a
                        call's params out of its key (repeatable), e.g. a run's
                        timestamp or random id: '\d{4}-\d{2}-\d{2}T[0-9:.]+Z'
  --volatile-key NAME   Leave members of this name out of a call's key, at any depth
                        of its params (repeatable)
  --keep-secrets        Store secrets as they are (tapes that never leave the machine)
  --no-fsync            Do not fsync each batch of records
  --chaos SPEC          Faults on demand for tool calls (docs/chaos.md): a comma list
                        of fault or fault:rate (rate 0..1, default 1) among error
                        (JSON-RPC error), tool-error (result with isError: true),
                        exit (-32051, the server exits mid-call), timeout (-32052),
                        plus latency=MS; e.g. tool-error:0.2,exit:0.05. Never recorded
  --chaos-seed N        Seed of the fault sequence (default random, printed with the
                        first fault)
  --chaos-attempts N    Only the first N attempts of a faulted call fail
  --chaos-live          Allow chaos in record, update and passthrough mode
  -h, --help            Show this help

A miss answers the request with JSON-RPC error -32050 (the diagnosis in its message) and
prints the full report on stderr; the session stays usable. On SIGTERM or SIGINT (a host
quitting, Ctrl-C) tapedeck stops at once: what was recorded is written, the tape closed, the
server stopped; calls still unanswered are not recorded. docs/mcp.md has the details.

Example (an MCP host's config; the host starts it outside your project, so the tape path is
absolute):
  "command": "npx",
  "args": ["-y", "llm-tapedeck", "mcp", "--tape", "/path/to/project/tapes/fs.tape", "--",
           "npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
`;

/** setTimeout's limit (a signed 32-bit count of milliseconds): a longer timeout would fire at once. */
const MAX_MS = 2_147_483_647;

/** The options of `tapedeck mcp` (everything after `--` is the server command). */
const OPTIONS = {
  tape: { type: 'string' },
  mode: { type: 'string' },
  'strict-order': { type: 'boolean' },
  timing: { type: 'string' },
  timeout: { type: 'string' },
  'shutdown-timeout': { type: 'string' },
  'cancel-grace': { type: 'string' },
  'redact-field': { type: 'string', multiple: true },
  'volatile-text': { type: 'string', multiple: true },
  'volatile-key': { type: 'string', multiple: true },
  'keep-secrets': { type: 'boolean' },
  'no-fsync': { type: 'boolean' },
  chaos: { type: 'string' },
  'chaos-seed': { type: 'string' },
  'chaos-attempts': { type: 'string' },
  'chaos-live': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;


/**
 * Runs `tapedeck mcp` with its arguments (those after `mcp`); resolves to the exit code.
 *
 * @example
 * await mcpCommand(['--tape', 'fs.tape', '--mode', 'record', '--', 'node', 'server.js'])
 */
export async function mcpCommand(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const own = dash >= 0 ? argv.slice(0, dash) : argv;
  const command = dash >= 0 ? argv.slice(dash + 1) : [];
  let values;
  try {
    ({ values } = parseArgs({
      args: dashValues(own, OPTIONS),
      options: OPTIONS,
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    const { message, didYouMean } = argsError(e, OPTIONS);
    throw new TapedeckError('E_USAGE', message, { hint: `${didYouMean}tapedeck mcp --tape FILE [--mode M] -- <server command>; tapedeck mcp --help lists the options.` });
  }
  if (values.help) {
    process.stdout.write(MCP_HELP);
    return EXIT.ok;
  }
  if (!values.tape) throw new TapedeckError('E_USAGE', 'mcp needs --tape.', { hint: 'tapedeck mcp --tape tapes/server.tape --mode record -- <server command>' });
  let timing: McpTiming | undefined;
  if (values.timing !== undefined) {
    const t = values.timing;
    if (t === 'none' || t === 'recorded') timing = t;
    else if (/^\d+(\.\d+)?$/.test(t)) timing = Number(t);
    else throw new TapedeckError('E_ARG', `Invalid --timing ${JSON.stringify(t)}.`, { hint: 'Use --timing none, --timing recorded or --timing <ms>.' });
  }
  let timeoutMs: number | undefined;
  if (values.timeout !== undefined) {
    timeoutMs = Number(values.timeout);
    // Worded as tapedeck serve words its timeouts.
    if (values.timeout.trim() === '' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_MS) {
      throw new TapedeckError('E_ARG', `Invalid --timeout ${JSON.stringify(values.timeout)}.`, { hint: `Use a whole number of milliseconds from 1 to ${MAX_MS}, e.g. --timeout 30000.` });
    }
  }
  const whole = (name: string, text: string | undefined, min: number): number | undefined => {
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n < min || n > 2_147_483_647) throw new TapedeckError('E_ARG', `Invalid --${name} ${JSON.stringify(text)}.`, { hint: `Give a whole number from ${min}.` });
    return n;
  };
  if (values.chaos === undefined && (values['chaos-seed'] ?? values['chaos-attempts'] ?? values['chaos-live']) !== undefined) {
    throw new TapedeckError('E_USAGE', 'The --chaos-* options need --chaos SPEC.', { hint: 'Say which faults to inject, e.g. --chaos tool-error:0.2.' });
  }
  const shutdownTimeoutMs = whole('shutdown-timeout', values['shutdown-timeout'], 0);
  const cancelGraceMs = whole('cancel-grace', values['cancel-grace'], 0);
  const seed = whole('chaos-seed', values['chaos-seed'], 0);
  const attempts = whole('chaos-attempts', values['chaos-attempts'], 1);
  const chaos = values.chaos === undefined ? undefined : { ...parseChaosSpec(values.chaos, 'mcp'), ...(seed !== undefined ? { seed } : {}), ...(attempts !== undefined ? { attempts } : {}), ...(values['chaos-live'] ? { live: true } : {}) };
  const opts = {
    ...(chaos ? { chaos } : {}),
    tape: values.tape,
    mode: values.mode,
    strictOrder: values['strict-order'] === true,
    timing,
    timeoutMs,
    ...(shutdownTimeoutMs !== undefined ? { shutdownTimeoutMs } : {}),
    ...(cancelGraceMs !== undefined ? { cancelGraceMs } : {}),
    durable: values['no-fsync'] !== true,
    ...(values['volatile-text'] ? { volatileText: values['volatile-text'] } : {}),
    ...(values['volatile-key'] ? { volatileKeys: values['volatile-key'] } : {}),
    redact: { keepSecrets: values['keep-secrets'] === true, ...(values['redact-field'] ? { fields: values['redact-field'] } : {}) },
    // Secrets masked: a miss's message goes to the client, and an agent hands it to its model.
    recordCommand: `re-record: npx llm-tapedeck mcp --tape ${shownCommand([values.tape])} --mode record -- ${command.length ? shownCommand(command) : '<server command>'}`,
    ...(command.length > 0 ? { server: { command: command[0]!, args: command.slice(1) } } : {}),
  };
  const { McpTape } = await import('./tape.ts');
  const mode = McpTape.check(opts);
  if (mode !== 'replay' && command.length === 0) {
    throw new TapedeckError('E_USAGE', `Mode ${mode} runs the server: give its command after --.`, { hint: `tapedeck mcp --tape ${shownCommand([values.tape])} --mode ${mode} -- npx -y @modelcontextprotocol/server-memory` });
  }
  // A host that quits, or Ctrl-C: stop now, write what was recorded and close the tape (record
  // mode's replacement of the calls recorded again happens only then). Without this, Node's
  // default ends the process at once and a re-record leaves the old answers first on the tape.
  // The MCP SDK's StdioClientTransport closes stdin, waits 2 s, sends SIGTERM, waits 2 s, then
  // SIGKILLs: the signal's stop takes well under those 2 s. A second signal exits at once.
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) {
      process.stderr.write(`tapedeck: ${signal} again, exiting without waiting\n`);
      process.exit(EXIT.interrupted);
    }
    process.stderr.write(`tapedeck: ${signal}: stopping the MCP session; writing what was recorded\n`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await runStdio({ ...opts, stop: stop.signal });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
