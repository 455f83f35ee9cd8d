// requestKeys(undefined) (and cache.get(undefined), a forgotten argument) said "A request body
// must be a JSON object; got a undefined." Now it says what it got in plain words.
import { expect, it } from 'vitest';
import { requestKeys } from '../../src/match/matcher.ts';

it.each([
  [undefined, 'got undefined.'],
  [null, 'got null.'],
  [5, 'got a number.'],
  [[1], 'got an array.'],
])('requestKeys(%j) names what it got', (v, said) => {
  expect(() => requestKeys(v as never)).toThrow(said);
});
