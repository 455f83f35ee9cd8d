/**
 * A pattern test that keeps its last answer: header values such as a content type are tested
 * once per record, and a recording repeats one or two of them, so comparing the text with the
 * last one tested costs less than running the pattern again (a bulk import tests several per
 * record). Only for patterns without `g` or `y`, whose test keeps no state. Used where the
 * browser bundle does not go (its size budget): the deck keeps its own last answer.
 *
 * @example
 * const isJson = lastTest(/[/+]json\b/i)
 * isJson('application/json') // true, tested
 * isJson('application/json') // true, the last answer
 */
export function lastTest(re: RegExp): (s: string) => boolean {
  if (re.global || re.sticky) throw new TypeError('lastTest: a pattern with g or y keeps state between tests');
  let last: string | undefined;
  let verdict = false;
  return (s: string): boolean => {
    if (s !== last) {
      verdict = re.test(s);
      last = s;
    }
    return verdict;
  };
}
