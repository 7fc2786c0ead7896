/**
 * The byte-level JSON reader (src/policy/graphql/json.ts) against `JSON.parse`: for every
 * valid-UTF-8 body, the same "is it JSON" answer, the same batch flag and items, and the same
 * `query` / `operationName` / `extensions` values. Table cases name each rule; a seeded
 * differential fuzz covers the rest; classify gives the same answer through either path.
 */
import { isUtf8 } from 'node:buffer';
import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import { FUZZ_SEED, rng } from '../helpers/rng.js';
import { parseJsonRequest, readJsonRequest } from '../../src/policy/graphql/json.js';
import { classifyGraphqlPost } from '../../src/policy/graphql-request.js';
import {
  GH_ADD_STAR,
  GH_ISSUE_CREATE,
  GH_ISSUE_LIST,
  GH_REPOSITORY_INFO,
  JSON_UTF8,
} from './fixtures/index.js';

/** The reader on `bytes` placed at every alignment (the word loop reads aligned 4-byte words). */
function readAt(bytes: Buffer, offset: number): ReturnType<typeof readJsonRequest> {
  const host = Buffer.alloc(bytes.length + 8, 0x22);
  bytes.copy(host, offset);
  return readJsonRequest(host.subarray(offset, offset + bytes.length));
}

function agree(bytes: Buffer): { ok: boolean; reader: unknown; reference: unknown } {
  const reference = parseJsonRequest(bytes.toString('utf8'));
  for (let off = 0; off < 4; off++) {
    for (const reader of [
      readAt(bytes, off),
      readJsonRequest(bytes, /^[\x00-\x7f]*$/.test(bytes.toString('latin1'))),
    ]) {
      if (!isDeepStrictEqual(reader, reference)) return { ok: false, reader, reference };
    }
  }
  return { ok: true, reader: reference, reference };
}

const long = (n: number, ch = 'x') => ch.repeat(n);

const cases: Record<string, string> = {
  'a plain request': '{"query":"{ a }","operationName":"Q","variables":{"x":1}}',
  'a batch': '[{"query":"{ a }"},{"query":"mutation { b }","operationName":null}]',
  'an empty batch': '[]',
  'an empty object': '{}',
  'a batch with a non-object element': '[{"query":"{a}"},1,"x",null,[],true]',
  'top-level scalars': '"{ a }"',
  'top-level number': '-12.5e+3',
  'top-level literals': 'null',
  'escapes in the query': '{"query":"{ a(s: \\"x\\\\y\\/z\\b\\f\\n\\r\\t\\") }"}',
  'unicode escapes': '{"query":"{ a(s: \\"\\u00e9\\u0041\\u2028\\uFFFF\\") }"}',
  'a surrogate pair': '{"query":"{ a(s: \\"\\ud83d\\ude00\\") }"}',
  'a lone surrogate (JSON.parse accepts it)': '{"query":"\\ud800","operationName":"\\udc00x"}',
  'raw non-ASCII': '{"query":"{ a(s: \\"é😀\\") }","operationName":"Ü"}',
  'a raw DEL is allowed': '{"query":"\x7f"}',
  'nested objects and arrays in variables':
    '{"variables":{"a":[1,[2,{"query":"mutation { x }"}],{"b":{"c":[]}}],"operationName":"N"},"query":"{ a }"}',
  'a nested key named like a member does not count':
    '{"extensions":{"query":"mutation { x }","operationName":"M"}}',
  'numbers of every shape':
    '{"v":[0,-0,1,-1,10,1.5,-1.5e10,1E5,1e-5,0.0,123456789012345678901234567890,1e400],"query":"{a}"}',
  'all four whitespace characters':
    ' \t\n\r{ \t\n\r"query" \t\n\r: \t\n\r"{a}" \t\n\r, "x" : [ 1 , 2 ] \t\n\r} \t\n\r',
  'duplicate keys: the last wins':
    '{"query":"mutation { a }","operationName":"A","query":"{ b }","operationName":"B"}',
  'keys that differ in case only': '{"query":"{ a }","Query":"mutation { b }","OPERATIONNAME":"M"}',
  'a key Go folds (ſ for s)': '{"extensions":{},"extenſions":1,"query":"{ a }"}',
  'an escaped duplicate': '{"query":"{ a }","qu\\u0065ry":"mutation { b }"}',
  'a duplicate inside variables is no clash': '{"query":"{ a }","variables":{"query":"x","Query":"y"}}',
  'a duplicate in one batch element only': '[{"query":"{ a }"},{"query":"{ a }","QUERY":"mutation { b }"}]',
  'duplicate keys with different types': '{"query":"{ a }","query":null,"extensions":{},"extensions":1}',
  'an escaped key is the key it decodes to': '{"qu\\u0065ry":"mutation { a }","\\u006fperationName":"X"}',
  'an escaped key that decodes to something else': '{"que\\u0072y2":"x","query":"{ a }"}',
  'members of every type': '{"query":1,"operationName":true,"extensions":[1]}',
  'long plain strings (word loop)': `{"query":"{ a(s: \\"${long(5000)}\\") }","x":"${long(77)}"}`,
  'long strings with escapes far apart': `{"query":"${`${long(200)}\\n`.repeat(50)}","operationName":"${long(100)}\\"${long(100)}"}`,
  'long strings with dense escapes': `{"query":"${'\\n\\t'.repeat(3000)}{ a }"}`,
  'a non-ASCII \\u escape in a long string': `{"query":"${long(5000)}\\u00e9${long(5000)}"}`,
  'a \\u0000 escape in a long string': `{"query":"${long(5000)}\\u0000${long(5000)}"}`,
  // not JSON
  'empty body': '',
  'only whitespace': ' \n',
  'a BOM': '\ufeff{"query":"{a}"}',
  'trailing garbage': '{"query":"{a}"}x',
  'two values': '{"query":"{a}"} {}',
  'trailing comma in an object': '{"query":"{a}",}',
  'trailing comma in an array': '[{"query":"{a}"},]',
  'a leading comma': '[,1]',
  'truncated object': '{"query":"{a}"',
  'truncated string': '{"query":"{a}',
  'truncated escape': '{"query":"\\',
  'truncated unicode escape': '{"query":"\\u00"}',
  'a bad unicode escape': '{"query":"\\u00g0"}',
  'an unknown escape': '{"query":"\\x41"}',
  'a raw newline in a string': '{"query":"{\na}"}',
  'a raw tab in a long string': `{"query":"${long(100)}\t${long(100)}"}`,
  'a raw NUL in a long string': `{"query":"${long(100)}\u0000"}`,
  'single quotes': "{'query':'{a}'}",
  'an unquoted key': '{query:"{a}"}',
  'a missing colon': '{"query" "{a}"}',
  'a missing value': '{"query":}',
  'leading zero': '{"v":01}',
  'a bare dot': '{"v":1.}',
  'a leading dot': '{"v":.5}',
  'a plus sign': '{"v":+1}',
  'a bare exponent': '{"v":1e}',
  'a signed bare exponent': '{"v":1e+}',
  'a lone minus': '{"v":-}',
  'NaN and Infinity': '{"v":NaN}',
  'a misspelt literal': '{"v":tru}',
  'a literal running on': '{"v":truex}',
  'a capitalised literal': '{"v":True}',
  'form feed is not JSON whitespace': '\f{"query":"{a}"}',
  'vertical tab is not JSON whitespace': '{"query":"{a}"\v}',
  'NBSP is not JSON whitespace': '{"query":"{a}"}\u00a0',
  'a mismatched bracket': '{"v":[1}',
  'an unclosed array': '[{"query":"{a}"}',
  'a comment': '{"query":"{a}"/* x */}',
};

t.test('the reader agrees with JSON.parse on every named case', async (t) => {
  for (const [name, text] of Object.entries(cases)) {
    const r = agree(Buffer.from(text));
    t.ok(r.ok, name, { reader: r.reader, reference: r.reference });
  }
  t.equal(
    readJsonRequest(Buffer.from(cases['duplicate keys: the last wins']!))?.items[0]?.query,
    '{ b }',
    'the last duplicate wins',
  );
  t.equal(
    readJsonRequest(Buffer.from(cases['an escaped key is the key it decodes to']!))?.items[0]?.query,
    'mutation { a }',
  );
  t.equal(readJsonRequest(Buffer.from(cases['a BOM']!)), undefined, 'a BOM is not JSON');
  const clash = (name: string) => readJsonRequest(Buffer.from(cases[name]!))?.items.map((it) => it?.keyClash);
  t.same(clash('duplicate keys: the last wins'), [true]);
  t.same(clash('keys that differ in case only'), [true]);
  t.same(clash('a key Go folds (ſ for s)'), [true]);
  t.same(clash('an escaped duplicate'), [true]);
  t.same(clash('a duplicate inside variables is no clash'), [false]);
  t.same(clash('a duplicate in one batch element only'), [false, true]);
  t.same(clash('a plain request'), [false]);
});

t.test('deep nesting is walked without recursion', async (t) => {
  const deep = `{"query":"{ a }","v":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
  t.ok(agree(Buffer.from(deep)).ok);
  t.equal(readJsonRequest(Buffer.from(deep))?.items[0]?.query, '{ a }');
  t.equal(
    readJsonRequest(Buffer.from(`{"v":${'['.repeat(200_000)}${']'.repeat(199_999)}}`)),
    undefined,
    'one bracket short',
  );
});

t.test('a special byte at every position and alignment of a long string', async (t) => {
  let checked = 0;
  let failed = 0;
  for (const special of [
    '\u0001',
    '\u001f',
    '"',
    '\\n',
    '\\',
    '\\u0041',
    '\\"',
    '\u0000',
    ' ',
    '\u007f',
    'é',
  ]) {
    for (let len = 28; len <= 80; len += 13) {
      for (let at = 0; at <= len; at++) {
        const text = `{"query":"${long(at)}${special}${long(len - at)}","operationName":"Q"}`;
        const r = agree(Buffer.from(text));
        checked++;
        if (!r.ok) {
          failed++;
          t.fail('disagreement', { text, reader: r.reader, reference: r.reference });
        }
      }
    }
  }
  t.equal(failed, 0, `${checked} strings`);
});

const rand = rng(FUZZ_SEED + 1);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const KEYS = [
  'query',
  'operationName',
  'extensions',
  'variables',
  'qu\\u0065ry',
  'x',
  '',
  '__proto__',
  'persistedQuery',
  'Query',
  'OPERATIONNAME',
  'extenſions',
  'operation\\u004eame',
];

/**
 * An oracle for key clashes that shares no code with the reader: JSON.parse accepted the text,
 * so a walk that skips strings and counts brackets finds the keys of each request object.
 */
function oracleClashes(text: string): boolean[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const batch = Array.isArray(json);
  const depthOfRequests = batch ? 2 : 1;
  const out: boolean[] = [];
  let depth = 0;
  let seen: Set<string> | undefined;
  let clash = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const str = JSON.parse(text.slice(i, j + 1)) as string;
      let k = j + 1;
      while (/\s/.test(text[k] ?? '')) k++;
      if (text[k] === ':' && depth === depthOfRequests && seen !== undefined) {
        const f = str.toLowerCase().replace(/\u017f/g, 's');
        if (['query', 'operationname', 'extensions'].includes(f)) {
          if (seen.has(f)) clash = true;
          seen.add(f);
        }
      }
      i = j;
    } else if (c === '{' || c === '[') {
      depth++;
      if (depth === depthOfRequests) {
        seen = c === '{' ? new Set() : undefined;
        clash = false;
      }
    } else if (c === '}' || c === ']') {
      if (depth === depthOfRequests && seen !== undefined) out.push(clash);
      depth--;
    }
  }
  return out;
}
const STRING_BITS = [
  'a',
  ' ',
  '{ a }',
  'mutation { b }',
  '\\"',
  '\\\\',
  '\\n',
  '\\u00e9',
  '\\ud83d\\ude00',
  '\\ud800',
  'é',
  '😀',
  '\\/',
  '#',
  'x'.repeat(40),
  'y'.repeat(300),
];

function randomString(): string {
  let s = '"';
  const n = Math.floor(rand() * 6);
  for (let i = 0; i < n; i++) s += pick(STRING_BITS);
  return `${s}"`;
}

function randomValue(depth: number): string {
  const r = rand();
  if (depth > 3 || r < 0.35)
    return pick([randomString(), randomString(), '0', '-1.5e3', '12', 'true', 'false', 'null', '1E+2', '-0']);
  const ws = () => pick(['', '', ' ', '\n', '\t', '\r\n  ']);
  if (r < 0.7) {
    const n = Math.floor(rand() * 5);
    const members = Array.from(
      { length: n },
      () => `${ws()}"${pick(KEYS)}"${ws()}:${ws()}${randomValue(depth + 1)}${ws()}`,
    );
    return `{${members.join(',')}}`;
  }
  const n = Math.floor(rand() * 4);
  return `[${Array.from({ length: n }, () => `${ws()}${randomValue(depth + 1)}${ws()}`).join(',')}]`;
}

const MUTATION_BITS = [
  '{',
  '}',
  '[',
  ']',
  '"',
  '\\',
  ',',
  ':',
  ' ',
  '\n',
  '\t',
  '\f',
  '\u0000',
  '\u001f',
  'u',
  '0',
  '1',
  '-',
  '+',
  '.',
  'e',
  'E',
  't',
  'n',
  'f',
  '\\u',
  '\ufeff',
  '\u00a0',
  'é',
];

function mutate(s: string): string {
  let out = s;
  const n = 1 + Math.floor(rand() * 3);
  for (let k = 0; k < n; k++) {
    const i = Math.floor(rand() * (out.length + 1));
    const op = rand();
    if (op < 0.4) out = out.slice(0, i) + pick(MUTATION_BITS) + out.slice(i);
    else if (op < 0.8) out = out.slice(0, i) + out.slice(i + 1 + Math.floor(rand() * 2));
    else out = out.slice(0, i);
  }
  return out;
}

t.test('differential fuzz: the reader and JSON.parse agree on random and mutated bodies', async (t) => {
  let valid = 0;
  let invalid = 0;
  let failures = 0;
  for (let i = 0; i < 6000; i++) {
    let text =
      rand() < 0.5
        ? randomValue(0)
        : `{"query":${randomString()},"operationName":${randomString()},"variables":${randomValue(1)}}`;
    if (rand() < 0.3) text = `[${text},${randomValue(0)}]`;
    if (rand() < 0.6) text = mutate(text);
    const bytes = Buffer.from(text);
    if (!isUtf8(bytes)) continue;
    const r = agree(bytes);
    if (r.reference === undefined) invalid++;
    else valid++;
    const want = oracleClashes(text);
    const got = (r.reference as ReturnType<typeof parseJsonRequest>)?.items
      .filter((it) => it !== undefined)
      .map((it) => it.keyClash);
    if (want !== undefined && !isDeepStrictEqual(got, want)) {
      failures++;
      t.fail('key clash differs from the oracle', { text, got, want, seed: FUZZ_SEED });
    }
    if (!r.ok) {
      failures++;
      t.fail('disagreement', { text, reader: r.reader, reference: r.reference, seed: FUZZ_SEED });
    }
  }
  t.equal(failures, 0, `${valid} valid and ${invalid} invalid bodies, seed ${FUZZ_SEED}`);
  t.ok(valid > 1000 && invalid > 1000, 'both kinds are well represented');
});

t.test('classify answers the same through the reader and through JSON.parse', async (t) => {
  const bodies: string[] = [
    JSON.stringify({ query: GH_ISSUE_LIST, variables: { owner: 'a', repo: 'b' } }),
    JSON.stringify([{ query: GH_REPOSITORY_INFO }, { query: GH_ISSUE_CREATE, operationName: 'IssueCreate' }]),
    JSON.stringify({ query: GH_ADD_STAR, operationName: null }),
    JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: 'ab' } } }),
    JSON.stringify({ query: 'query Q1 { a } mutation M1 { b }', operationName: 'M1' }),
    JSON.stringify({ query: ['{ a }'] }),
    JSON.stringify({ query: '{ a }', operationName: 1 }),
    JSON.stringify({ variables: {} }),
    '[]',
    '"x"',
    '{"query": "{ a }"',
    '{"query":"{ a }","query":"mutation { b }"}',
    '{"qu\\u0065ry":"mutation { b }"}',
    `{"query":"mutation { a(s: \\"${long(100_000)}\\") { b } }"}`,
  ];
  for (let i = 0; i < 1500; i++)
    bodies.push(mutate(rand() < 0.5 ? pick(bodies.slice(0, 14)) : randomValue(0)));
  let failures = 0;
  for (const text of bodies) {
    const body = Buffer.from(text);
    for (const target of [undefined, 'operationName=M1']) {
      const viaReader = classifyGraphqlPost(JSON_UTF8, target, body, undefined, 0);
      const viaParse = classifyGraphqlPost(JSON_UTF8, target, body, undefined, Number.POSITIVE_INFINITY);
      if (!isDeepStrictEqual(viaReader, viaParse)) {
        failures++;
        t.fail('classify differs', { text: text.slice(0, 300), viaReader, viaParse });
      }
    }
  }
  t.equal(failures, 0, `${bodies.length} bodies, with and without ?operationName=`);
});

t.test('large bodies take the reader path in classify and keep every rule', async (t) => {
  const pad = long(64 * 1024);
  const post = (text: string) => classifyGraphqlPost(JSON_UTF8, undefined, Buffer.from(text));
  t.equal(post(`{"query":"mutation { a(s: \\"${pad}\\") { b } }"}`).class, 'write');
  t.equal(post(`{"query":"{ a(s: \\"${pad}\\") }"}`).class, 'read');
  t.equal(
    post(`{"query":"{ a(s: \\"${pad}\\") }","query":"mutation { b }"}`).info.unparsedReason,
    'duplicate-key',
    'a duplicated query',
  );
  t.equal(post(`{"query":"{ a }","pad":"${pad}"}x`).info.unparsedReason, 'not-json', 'trailing garbage');
  t.equal(
    post(`{"query":"{ a }","pad":"${pad}\n"}`).info.unparsedReason,
    'not-json',
    'a raw newline in a long string',
  );
  t.equal(post(`\ufeff{"query":"{ a }","pad":"${pad}"}`).info.unparsedReason, 'not-json', 'a BOM');
  t.equal(
    post(`{"qu\\u0065ry":"mutation { b }","pad":"${pad}"}`).reason,
    'graphql-mutation',
    'an escaped key',
  );
  t.equal(
    post(`{"query":"{ a(s: \\"${pad}\\u00e9\\") }\\nmutation M { b }","pad":"${pad}é"}`).reason,
    'graphql-mutation',
    'non-ASCII and a \\u escape',
  );
  t.equal(post(`{"extensions":{"persistedQuery":{}},"pad":"${pad}"}`).info.unparsedReason, 'persisted-query');
  t.equal(post(`[{"query":"{ a }"},"${pad}"]`).info.unparsedReason, 'bad-shape');
  const dense = JSON.stringify({ query: `${'\n\t'.repeat(40_000)}mutation { a }` });
  t.equal(post(dense).reason, 'graphql-mutation', 'dense escapes fall back to JSON.parse of the member');
});
