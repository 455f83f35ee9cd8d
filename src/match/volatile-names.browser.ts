// The page's stand-in for ./volatile-names.ts: a miss in a page never offers to ignore a member
// (`volatileKeys`, `ignoreArgs`); it says what differs and to re-record, which is always right.
// The rule that tells a volatile member from content is Node's alone, where misses are read in
// test output and a wrong offer would serve another request's recording; a page is kept small.

/** Member names that carry what a message says (the same set as Node's). */
export const CONTENT_FIELDS: ReadonlySet<string> = new Set(['content', 'text', 'role', 'name', 'arguments', 'input', 'output', 'type', 'url', 'sha256', 'data']);

/** In a page no name is offered as volatile. */
export function isVolatileName(_name: string, _arg = false): boolean {
  return false;
}

/** Never reached in a page (nothing is offered as volatile). */
export function withoutVolatileMember(view: { messages?: unknown; system?: unknown; tools?: unknown }, _name: string): unknown {
  return view;
}
