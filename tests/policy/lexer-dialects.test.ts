/**
 * Differential corpus for the GraphQL lexer: the same bytes read by models of the lexers
 * major servers run (graphql-js and its ports, graphql-java old and new, graphql-ruby's
 * Ruby and C lexers, gqlparser/gqlgen, graph-gophers, async-graphql's pest grammar, Hot
 * Chocolate). Each
 * model cuts the document into tokens by that implementation's rules (docs/policy.md has
 * the survey) and graphql-js parses the result, so every model yields the operations that
 * server would execute. The property: whenever our classifier says a document is parsed,
 * every server reading that can execute is covered by ours (class no higher, root fields a
 * subset). Where readings differ, the classifier must call the document unparsed.
 */
import { type DocumentNode, Kind, parse, type SelectionSetNode } from 'graphql';
import t, { type Test } from 'tap';
import { classify, classRank, type WireClass } from '../../src/policy/index.js';
import { FUZZ_SEED, rng } from '../helpers/rng.js';
import {
  GH_ADD_STAR,
  GH_ISSUE_CREATE,
  GH_ISSUE_LIST,
  GH_REPOSITORY_INFO,
  gqlPost,
} from './fixtures/index.js';

/** How one implementation cuts text into tokens, where it differs from the spec. */
interface Dialect {
  name: string;
  /** what a character does inside a `#` comment */
  inComment(c: number, next: number): 'continue' | 'end';
  /** ignored outside tokens besides tab, space, comma, LF and CR */
  extraSpace(c: number, at: number): boolean;
  /** a raw LF/CR in a "…" string: an error, or the string silently ends there */
  rawBreakInString: 'error' | 'end';
  /** block strings: the spec; lazy (ends at the first """, \""" too); a run of ≥ 3 quotes closes with its last three */
  block: 'spec' | 'lazy' | 'last-three';
  /** a name or `.` right after a number is an error (else two tokens) */
  strictNumbers: boolean;
}

const isControl = (c: number): boolean => (c < 0x20 && c !== 9) || c === 0x7f;
const isLoneSurrogate = (c: number, next: number): boolean =>
  c >= 0xd800 && c <= 0xdbff ? !(next >= 0xdc00 && next <= 0xdfff) : c >= 0xdc00 && c <= 0xdfff;
const lf = (c: number): boolean => c === 10;
const crOrLf = (c: number): boolean => c === 10 || c === 13;

const DIALECTS: Dialect[] = [
  {
    name: 'graphql-js 16 (and graphql-core, graphql-php without controls)',
    inComment: (c, n) => (crOrLf(c) || isLoneSurrogate(c, n) ? 'end' : 'continue'),
    extraSpace: (c) => c === 0xfeff,
    rawBreakInString: 'error',
    block: 'spec',
    strictNumbers: true,
  },
  {
    name: 'graphql-java (older grammar: U+2028/U+2029 end comments and are whitespace)',
    inComment: (c) => (crOrLf(c) || c === 0x2028 || c === 0x2029 ? 'end' : 'continue'),
    extraSpace: (c) => c === 0xfeff || c === 0x2028 || c === 0x2029,
    rawBreakInString: 'error',
    block: 'lazy',
    strictNumbers: true,
  },
  {
    name: 'graphql-java (current grammar)',
    inComment: (c, n) => (crOrLf(c) || isLoneSurrogate(c, n) ? 'end' : 'continue'),
    extraSpace: (c) => c === 0xfeff || c === 0x2028 || c === 0x2029,
    rawBreakInString: 'error',
    block: 'lazy',
    strictNumbers: true,
  },
  {
    name: 'graphql-ruby (Ruby lexer: a comment runs to LF)',
    inComment: (c) => (lf(c) ? 'end' : 'continue'),
    extraSpace: () => false,
    rawBreakInString: 'error',
    block: 'spec',
    strictNumbers: false,
  },
  {
    name: 'graphql-ruby (C lexer)',
    inComment: (c) => (crOrLf(c) ? 'end' : 'continue'),
    extraSpace: () => false,
    rawBreakInString: 'error',
    block: 'last-three',
    strictNumbers: false,
  },
  {
    name: 'gqlparser / gqlgen',
    inComment: (c) => (isControl(c) ? 'end' : 'continue'),
    extraSpace: (c) => c === 0xfeff,
    rawBreakInString: 'error',
    block: 'last-three',
    strictNumbers: false,
  },
  {
    name: 'async-graphql (pest)',
    inComment: (c) => (crOrLf(c) ? 'end' : 'continue'),
    extraSpace: (c) => c === 0xfeff,
    rawBreakInString: 'error',
    block: 'spec',
    strictNumbers: true,
  },
  {
    name: 'graph-gophers/graphql-go (Go text/scanner: block strings end at the first triple quote)',
    inComment: (c) => (crOrLf(c) ? 'end' : 'continue'),
    extraSpace: () => false,
    rawBreakInString: 'error',
    block: 'lazy',
    strictNumbers: false,
  },
  {
    name: 'Hot Chocolate',
    inComment: (c) => (isControl(c) ? 'end' : 'continue'),
    extraSpace: (c, at) => c === 0xfeff && at === 0,
    rawBreakInString: 'end',
    block: 'spec',
    strictNumbers: false,
  },
];

const isNameStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isNameChar = (c: number): boolean => isNameStart(c) || (c >= 48 && c <= 57);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** The document as this dialect's lexer cuts it, re-spelled so graphql-js parses the same tokens; null on a lexical error. */
function respell(src: string, d: Dialect): string | null {
  const out: string[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src.charCodeAt(i);
    if (c === 9 || c === 32 || c === 44 || c === 10 || c === 13 || d.extraSpace(c, i)) {
      i++;
    } else if (c === 35) {
      i++;
      while (i < n && d.inComment(src.charCodeAt(i), src.charCodeAt(i + 1)) === 'continue') i++;
    } else if (isNameStart(c)) {
      const s = i;
      while (i < n && isNameChar(src.charCodeAt(i))) i++;
      out.push(src.slice(s, i));
    } else if (isDigit(c) || c === 45) {
      const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(src.slice(i, i + 400));
      if (m === null || m[0] === '-') return null;
      i += m[0].length;
      const after = src.charCodeAt(i);
      if (d.strictNumbers && (isNameStart(after) || after === 46 || isDigit(after))) return null;
      out.push('0');
    } else if (c === 46) {
      if (src.startsWith('...', i)) {
        out.push('...');
        i += 3;
      } else return null;
    } else if ('!$&():=@[]{|}'.includes(src[i]!)) {
      out.push(src[i]!);
      i++;
    } else if (c === 34) {
      if (src.startsWith('"""', i)) {
        i += 3;
        let closed = false;
        while (i < n) {
          if (d.block !== 'lazy' && src.startsWith('\\"""', i)) {
            i += 4;
          } else if (src.startsWith('"""', i)) {
            if (d.block === 'last-three') while (src.charCodeAt(i + 3) === 34) i++;
            i += 3;
            closed = true;
            break;
          } else i++;
        }
        if (!closed) return null;
      } else {
        i++;
        let closed = false;
        while (i < n) {
          const x = src.charCodeAt(i);
          if (x === 92) i += 2;
          else if (x === 34) {
            i++;
            closed = true;
            break;
          } else if (x === 10 || x === 13) {
            if (d.rawBreakInString === 'error') return null;
            closed = true;
            break;
          } else i++;
        }
        if (!closed) return null;
      }
      out.push('"s"');
    } else {
      return null;
    }
  }
  return out.join(' ');
}

interface Reading {
  cls: WireClass;
  fields: Set<string>;
}

/** What a server with this dialect executes for (doc, operationName); null when it refuses. */
function serverReading(doc: string, operationName: string | undefined, d: Dialect): Reading | null {
  const text = respell(doc, d);
  if (text === null) return null;
  let ast: DocumentNode;
  try {
    ast = parse(text);
  } catch {
    return null;
  }
  if (
    !ast.definitions.every((x) => x.kind === Kind.OPERATION_DEFINITION || x.kind === Kind.FRAGMENT_DEFINITION)
  )
    return null;
  const frags = new Map<string, SelectionSetNode>();
  for (const x of ast.definitions)
    if (x.kind === Kind.FRAGMENT_DEFINITION) frags.set(x.name.value, x.selectionSet);
  const ops = ast.definitions.filter((x) => x.kind === Kind.OPERATION_DEFINITION);
  const chosen =
    operationName === undefined
      ? ops.length === 1
        ? ops
        : []
      : ops.filter((o) => o.name?.value === operationName);
  if (chosen.length !== 1) return null; // the server refuses an unknown or missing operationName
  const op = chosen[0]!;
  const fields = new Set<string>();
  const walk = (set: SelectionSetNode, seen: Set<string>): boolean => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) fields.add(s.name.value);
      else if (s.kind === Kind.INLINE_FRAGMENT) {
        if (!walk(s.selectionSet, seen)) return false;
      } else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        const f = frags.get(s.name.value);
        if (f === undefined || !walk(f, seen)) return false; // validation refuses an unknown fragment
      }
    }
    return true;
  };
  if (!walk(op.selectionSet, new Set())) return null;
  return { cls: op.operation === 'query' ? 'read' : 'write', fields };
}

/** The document with every non-printable-ASCII character escaped (raw U+2028 breaks TAP's YAML). */
const ascii = (s: string): string =>
  s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Checks one document; returns whether the dialects disagreed on it. */
function check(
  t: Test,
  doc: string,
  operationName: string | undefined,
  label: string,
): { disputed: boolean; parsed: boolean } {
  const body: Record<string, unknown> = { query: doc };
  if (operationName !== undefined) body.operationName = operationName;
  const mine = classify(gqlPost(body));
  const readings = DIALECTS.map((d) => ({ d: d.name, r: serverReading(doc, operationName, d) }));
  const keys = new Set(
    readings.map(({ r }) => (r === null ? 'refused' : `${r.cls}:${[...r.fields].sort().join(',')}`)),
  );
  const disputed = keys.size > 1;
  const parsed = mine.graphql?.parsed === true;
  if (parsed) {
    const ours = new Set(mine.graphql!.operations.flatMap((o) => o.rootFields));
    for (const { d, r } of readings) {
      if (r === null) continue;
      const covered = classRank(r.cls) <= classRank(mine.class) && [...r.fields].every((f) => ours.has(f));
      if (!covered)
        t.fail(`${label}: ${d} runs ${r.cls} {${[...r.fields]}} where we read ${mine.class} {${[...ours]}}`, {
          doc: ascii(doc),
          operationName,
        });
    }
  } else {
    if (classRank(mine.class) < classRank('write')) t.fail(`${label}: unparsed below write`);
  }
  return { disputed, parsed };
}

// Characters that lexers treat differently somewhere, and some that none do.
const TRICKY: [name: string, ch: string][] = [
  ['LF', '\n'],
  ['CR', '\r'],
  ['CRLF', '\r\n'],
  ['U+2028', '\u2028'],
  ['U+2029', '\u2029'],
  ['NEL U+0085', '\u0085'],
  ['VT', '\u000b'],
  ['FF', '\u000c'],
  ['NUL', '\u0000'],
  ['DEL', '\u007f'],
  ['ESC', '\u001b'],
  ['lone high surrogate', '\ud800'],
  ['lone low surrogate', '\udc00'],
  ['emoji (a pair)', '\ud83d\ude00'],
  ['BOM', '\ufeff'],
  ['NBSP', '\u00a0'],
  ['U+2000', '\u2000'],
  ['U+3000', '\u3000'],
  ['tab', '\t'],
  ['space', ' '],
  ['quote', '"'],
  ['triple quote', '"""'],
  ['backslash', '\\'],
  ['escaped triple quote', '\\"""'],
  ['four quotes', '""""'],
  ['hash', '#'],
  ['é', '\u00e9'],
];

const DELETE = 'deleteRepository(input: {repositoryId: "R_1"}) { clientMutationId }';
// Templates: X is where the tricky character goes. Several are known exploits for one lexer.
const TEMPLATES: [name: string, doc: string][] = [
  ['comment before a mutation', `query Q { viewer { login } } # note X mutation M { ${DELETE} }`],
  ['comment at the end of a line', `query Q { viewer { login } } # noteX\nmutation M { ${DELETE} }`],
  ['ruby CR exploit', 'query Q { a # X (x: """ \n } mutation M { deleteRepository } \n # """) }'],
  ['comment inside the root selection', 'mutation M { addStar # X\n deleteRepository }'],
  ['string argument', `query Q { a(s: "xX") } mutation M { ${DELETE} }`],
  ['Hot Chocolate raw break', 'query Q { a(s: "xX) } mutation M { deleteRepository } #") }'],
  ['block string', `query Q { a(s: """xX""") } mutation M { ${DELETE} }`],
  [
    'block string hiding a mutation',
    'query Q { a(s: """xX""") }\n#"""\nmutation M { deleteRepository } #"""',
  ],
  ['block close then quote', 'query Q { a(s: """x"""X, t: ") } mutation M { deleteRepository } #") }'],
  ['between definitions', `query Q { a }X mutation M { ${DELETE} }`],
  ['at the start', `Xmutation M { ${DELETE} }`],
  ['inside a root field name', 'mutation M { deleteXRepository }'],
  ['before a root field', 'mutation M { X deleteRepository }'],
  ['after a number', 'query Q { a(x: 1X) } mutation M { deleteRepository }'],
  ['on and a comment (pest)', 'mutation M { ...on#X\n deleteRepository { id } }'],
  ['spread', 'mutation M { ..X. on Mutation { deleteRepository } }'],
];

t.test(
  'every tricky character in every template: our reading covers every server that would run it',
  async (t) => {
    let cases = 0;
    let disputed = 0;
    let disputedParsed = 0;
    for (const [tname, tpl] of TEMPLATES) {
      for (const [cname, ch] of TRICKY) {
        const doc = tpl.replace('X', ch);
        for (const op of [undefined, 'Q', 'M']) {
          const r = check(t, doc, op, `${tname} / ${cname} / ${op ?? 'no operationName'}`);
          cases++;
          if (r.disputed) {
            disputed++;
            if (r.parsed) disputedParsed++;
          }
        }
      }
    }
    t.ok(cases > 1000, `${cases} cases`);
    t.ok(
      disputed > 100,
      `${disputed} cases where the server models disagree (${disputedParsed} of them parsed by us, each covering every reading)`,
    );
  },
);

const SEEDS = [
  GH_ISSUE_LIST,
  GH_REPOSITORY_INFO,
  GH_ISSUE_CREATE,
  GH_ADD_STAR,
  `query Q { viewer { login } }\nmutation M { ${DELETE} }`,
];
const BITS = [
  '#',
  '"',
  '"""',
  '\\"""',
  '\\',
  '\r',
  '\n',
  '\u2028',
  '\u0085',
  '\u000b',
  '\ufeff',
  '\ud800',
  '{',
  '}',
  ' mutation M { deleteRepository } ',
  '""',
];

t.test('seeded fuzz: random tricky insertions into real gh documents', async (t) => {
  const rand = rng(FUZZ_SEED + 7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  let disputed = 0;
  for (let k = 0; k < 3000; k++) {
    let doc = pick(SEEDS);
    const edits = 1 + Math.floor(rand() * 3);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(rand() * (doc.length + 1));
      doc = doc.slice(0, at) + pick(BITS) + doc.slice(at);
    }
    if (check(t, doc, pick([undefined, 'Q', 'M', 'IssueList']), `fuzz ${k} (seed ${FUZZ_SEED})`).disputed)
      disputed++;
  }
  t.ok(disputed > 20, `${disputed} disputed documents, each handled safely`);
});

// Hand-written cases: what each construct classifies as, and why.
const TABLE: [name: string, doc: string, op: string | undefined, cls: WireClass, why?: string][] = [
  [
    'a comment ended by U+2028 hides nothing',
    `query Q { viewer { login } } # note\u2028mutation M { ${DELETE} }`,
    'M',
    'write',
    'ambiguous',
  ],
  ['U+2029 in a comment', `{ a } # x\u2029mutation M { b }`, undefined, 'write', 'ambiguous'],
  ['NEL in a comment', '{ a } # x\u0085y\n', undefined, 'write', 'ambiguous'],
  [
    'VT in a comment (Hot Chocolate, gqlparser end it)',
    '{ a } # x\u000by\n',
    undefined,
    'write',
    'ambiguous',
  ],
  ['NUL in a comment', '{ a } # x\u0000y\n', undefined, 'write', 'ambiguous'],
  ['DEL in a comment (Hot Chocolate ends it)', '{ a } # x\u007fy\n', undefined, 'write', 'ambiguous'],
  ['a lone surrogate in a comment', '{ a } # x\ud800y\n', undefined, 'write', 'ambiguous'],
  [
    'a lone CR ends a comment for graphql-js, not for graphql-ruby',
    '{ a } # x\rmutation { b }',
    undefined,
    'write',
    'ambiguous',
  ],
  ['CRLF ends a comment for everyone', '{ a } # x\r\n{ b }', undefined, 'read'],
  ['an emoji in a comment is fine', '{ a } # 😀 x\n', undefined, 'read'],
  ['NBSP and accents in a comment are fine', '{ a } # caf\u00e9\u00a0x\n', undefined, 'read'],
  ['a comment at the end of the document', '{ a } # the end', undefined, 'read'],
  ['a BOM at the start is skipped', '\ufeff{ a }', undefined, 'read'],
  ['a BOM elsewhere is ambiguous', '{ a }\ufeff', undefined, 'write', 'ambiguous'],
  ['a BOM inside a selection', 'mutation { dele\ufeffteRepository }', undefined, 'write', 'ambiguous'],
  ['NBSP between tokens is a syntax error', '{\u00a0a }', undefined, 'write', 'syntax'],
  ['U+2028 between tokens (graphql-java whitespace) is refused', '{ a }\u2028', undefined, 'write', 'syntax'],
  [
    'a raw LF in a string (Hot Chocolate ends the string)',
    'query Q { a(s: "x\n) } mutation M { b } #") }',
    'M',
    'write',
    'ambiguous',
  ],
  ['a raw CR in a string', '{ a(s: "x\ry") }', undefined, 'write', 'ambiguous'],
  ['escaped line breaks in a string are fine', '{ a(s: "x\\ny\\r") }', undefined, 'read'],
  ['a string after a line break elsewhere is fine', '{ a\n b(s: "x") }', undefined, 'read'],
  [
    '\\""" in a block string (graphql-java ends it there)',
    '{ a(s: """x\\"""y""") }',
    undefined,
    'write',
    'ambiguous',
  ],
  [
    'a block string closed by four quotes (gqlparser keeps one)',
    '{ a(s: """x"""") }',
    undefined,
    'write',
    'ambiguous',
  ],
  ['a block string with inner quotes is fine', '{ a(s: """x "" y""") }', undefined, 'read'],
  ['a block string with raw line breaks is fine', '{ a(s: """x\ny\r\nz""") }', undefined, 'read'],
  [
    '`...on` then a comment (pest reads a spread and a field)',
    'mutation { ...on#c\n Mutation { a } }',
    undefined,
    'write',
    'ambiguous',
  ],
  [
    '`... on` with a comment before the type',
    'mutation { ... on #c\n Mutation { a } }',
    undefined,
    'write',
    'ambiguous',
  ],
  ['`... on Mutation` is fine', 'mutation { ... on Mutation { a } }', undefined, 'write'],
  ['a name after a number is refused', '{ a(x: 1b) }', undefined, 'write', 'syntax'],
  ['a non-ASCII name is refused', '{ caf\u00e9 }', undefined, 'write', 'syntax'],
  ['. . . is not a spread', '{ . . . F }', undefined, 'write', 'syntax'],
];

t.test('hand-written cases', async (t) => {
  for (const [name, doc, op, cls, why] of TABLE) {
    const body: Record<string, unknown> = { query: doc };
    if (op !== undefined) body.operationName = op;
    const c = classify(gqlPost(body));
    t.same({ class: c.class, why: c.graphql?.unparsedReason }, { class: cls, why }, name);
    check(t, doc, op, name);
  }
});
