/**
 * An LLM recording as a route's matcher takes it, filed by where the collection loaded it: its
 * `source` (`tape@offset`, named by miss messages) is made when something reads it. A route
 * keyed at its first miss (or at open) files every recording of the tape; made for each of
 * 100,000, those strings and the offset lookups behind them were read by no message but the few
 * closest recordings'.
 *
 * @example
 * const rec = new FiledRecording(body, 7, (i) => `tape.msgpack@${offsets[i]}`, 7);
 * rec.source // 'tape.msgpack@…', made now
 */
export class FiledRecording {
  // A Recording may carry other members (src/match/matcher.ts); this one has none.
  [extra: string]: unknown;

  constructor(
    readonly request: unknown,
    readonly response: unknown,
    private readonly where: (index: number) => string,
    private readonly index: number,
  ) {}

  get source(): string {
    return this.where(this.index);
  }
}
