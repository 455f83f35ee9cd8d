// The one reading of query strings and form bodies shared by redaction's echo search, the secret
// scan and rerecord (src/store/query-pairs.ts).
import { describe, expect, it } from 'vitest';
import { formPairs, queryDecode, queryPairs, urlQuery } from '../../src/store/query-pairs.ts';

describe('queryDecode', () => {
  it('reads + as a space and decodes percent escapes', () => {
    expect(queryDecode('a+b%20c%2Bd')).toBe('a b c+d');
    expect(queryDecode('%E2%9C%93')).toBe('\u2713');
  });
  it('keeps malformed escapes as written, + included, and never throws', () => {
    for (const raw of ['%zz', '100%', '%E2', 'a+%G1', '%']) expect(queryDecode(raw)).toBe(raw);
  });
});

describe('urlQuery', () => {
  it('is the text between the first ? and the fragment', () => {
    expect(urlQuery('/v1/x?key=abc#top')).toBe('key=abc');
    expect(urlQuery('POST /v1/x?a=1?b=2')).toBe('a=1?b=2');
    expect(urlQuery('https://h/p?')).toBe('');
    expect(urlQuery('/v1/x#frag?not=query')).toBe('not=query');
  });
  it('is undefined without a ?', () => {
    expect(urlQuery('/v1/x')).toBeUndefined();
  });
});

describe('queryPairs', () => {
  it('gives each pair as written, its name and value as meant', () => {
    expect(queryPairs('api%2Dkey=a+b&x=%41')).toEqual([
      { pair: 'api%2Dkey=a+b', name: 'api-key', raw: 'a+b', value: 'a b' },
      { pair: 'x=%41', name: 'x', raw: '%41', value: 'A' },
    ]);
  });
  it('a malformed escape is read as written', () => {
    expect(queryPairs('key=%zz%&b%ad=1')).toEqual([
      { pair: 'key=%zz%', name: 'key', raw: '%zz%', value: '%zz%' },
      { pair: 'b%ad=1', name: 'b%ad', raw: '1', value: '1' },
    ]);
  });
  it('a # ends the query', () => {
    expect(queryPairs('key=abc#sig=def')).toEqual([{ pair: 'key=abc', name: 'key', raw: 'abc', value: 'abc' }]);
    expect(queryPairs('#key=abc')).toEqual([{ pair: '', name: '', raw: undefined, value: undefined }]);
  });
  it('empty values, pieces without =, and empty pieces', () => {
    expect(queryPairs('a=&flag&&b==c')).toEqual([
      { pair: 'a=', name: 'a', raw: '', value: '' },
      { pair: 'flag', name: 'flag', raw: undefined, value: undefined },
      { pair: '', name: '', raw: undefined, value: undefined },
      { pair: 'b==c', name: 'b', raw: '=c', value: '=c' },
    ]);
  });
  it('repeated names each in their place, in order', () => {
    expect(queryPairs('key=1&other=2&key=3').map((p) => [p.name, p.value])).toEqual([
      ['key', '1'],
      ['other', '2'],
      ['key', '3'],
    ]);
  });
});

describe('formPairs', () => {
  it('reads a form body as a query, with # part of a value', () => {
    expect(formPairs('password=p%40ss+word&note=a#b')).toEqual([
      { pair: 'password=p%40ss+word', name: 'password', raw: 'p%40ss+word', value: 'p@ss word' },
      { pair: 'note=a#b', name: 'note', raw: 'a#b', value: 'a#b' },
    ]);
  });
});
