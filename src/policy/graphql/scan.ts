/**
 * The bounded GraphQL document scan: which operations a document holds, their types,
 * names and root fields. It reads the definition level and the root selection set of each
 * definition exactly (the GraphQL spec's grammar, §2.2–2.8); everything deeper is skipped as balanced
 * brackets, because it cannot change an operation's type or root fields.
 *
 * This folder is the GraphQL reader only (lexer, JSON body reader, scan): it knows nothing of
 * classes or requests and imports nothing of the policy; graphql-request.ts turns its answer
 * into a class.
 */
import { AT, COLON, EOF, ERR, LBRACE, LPAREN, Lexer, NAME, RBRACE, SPREAD } from './lexer.js';

/** The three GraphQL operation types. */
export type GraphqlOperationType = 'query' | 'mutation' | 'subscription';

/** Bounds on the GraphQL scan, so a hostile document costs little. */
export interface ScanLimits {
  /** tokens per document; past it the document counts as unparsed */
  maxTokens: number;
  /** root selections (fields and spreads) over all definitions, and fragment-resolution steps */
  maxRootEntries: number;
}

/** 1M tokens bounds a scan at ~10 ms; gh's largest documents have well under 1k. */
export const DEFAULT_SCAN_LIMITS: Readonly<ScanLimits> = Object.freeze({
  maxTokens: 1_000_000,
  maxRootEntries: 10_000,
});

/** One operation the scan found: its type and name. */
export interface ScannedOperation {
  type: GraphqlOperationType;
  name: string | undefined;
  rootFields: string[];
}

/** The operations of a GraphQL document, or why it could not be scanned. */
export type ScanResult = { ok: true; operations: ScannedOperation[] } | { ok: false; reason: string };

interface Def {
  type: GraphqlOperationType | 'fragment';
  name: string | undefined;
  fields: string[];
  spreads: string[];
}

/** Skip from an opening bracket (the current token) past its match; returns the token after. */
function skipBalanced(lx: Lexer): number {
  return lx.skipGroup();
}

/** `(@ Name Arguments?)*` starting at token t; returns the token after. */
function directives(lx: Lexer, t: number): number {
  while (t === AT) {
    if (lx.next() !== NAME) return lx.fail('syntax');
    t = lx.next();
    if (t === LPAREN) t = skipBalanced(lx);
  }
  return t;
}

/**
 * The root selection set (current token `{`) into def. Inline fragments at the root are
 * flattened with a counter rather than recursion, so `... { ... { …` cannot overflow the stack.
 */
function rootSelections(lx: Lexer, def: Def, budget: { left: number }): number {
  let nest = 0;
  let t = lx.next();
  if (t === RBRACE) return lx.fail('syntax'); // `{}` is not a selection set
  for (;;) {
    if (t === RBRACE) {
      if (nest === 0) return lx.next();
      nest--;
      t = lx.next();
    } else if (t === NAME) {
      let name = lx.text();
      t = lx.next();
      if (t === COLON) {
        if (lx.next() !== NAME) return lx.fail('syntax');
        name = lx.text();
        t = lx.next();
      }
      if (--budget.left < 0) return lx.fail('root-field-limit');
      def.fields.push(name);
      if (t === LPAREN) t = skipBalanced(lx);
      t = directives(lx, t);
      if (t === LBRACE) t = skipBalanced(lx);
    } else if (t === SPREAD) {
      t = lx.next();
      if (t === NAME && !lx.is('on')) {
        if (--budget.left < 0) return lx.fail('root-field-limit');
        def.spreads.push(lx.text());
        t = directives(lx, lx.next());
        continue;
      }
      if (t === NAME) {
        const on = lx.pos;
        if (lx.next() !== NAME) return lx.fail('syntax');
        // async-graphql's grammar wants plain whitespace after `on`: with a comment there it
        // reads `...on` as a spread of a fragment named `on` and the type as a root field
        if (lx.commentSince(on)) return lx.fail('ambiguous');
        t = lx.next();
      }
      t = directives(lx, t);
      if (t !== LBRACE) return lx.fail('syntax');
      t = lx.next();
      if (t === RBRACE) return lx.fail('syntax');
      nest++;
    } else {
      return lx.fail('syntax');
    }
  }
}

function bad(lx: Lexer, reason = 'syntax'): null {
  lx.fail(reason);
  return null;
}

/** Read the definitions of a document; null (with lx.error set) when it is not executable. */
function definitions(lx: Lexer, budget: { left: number }): Def[] | null {
  const defs: Def[] = [];
  let t = lx.next();
  while (t !== EOF) {
    const def: Def = { type: 'query', name: undefined, fields: [], spreads: [] };
    if (t === NAME && (lx.is('query') || lx.is('mutation') || lx.is('subscription'))) {
      def.type = lx.text() as GraphqlOperationType;
      t = lx.next();
      if (t === NAME) {
        def.name = lx.text();
        t = lx.next();
      }
      if (t === LPAREN) t = skipBalanced(lx);
      t = directives(lx, t);
    } else if (t === NAME && lx.is('fragment')) {
      def.type = 'fragment';
      if (lx.next() !== NAME || lx.is('on')) return bad(lx);
      def.name = lx.text();
      if (lx.next() !== NAME || !lx.is('on') || lx.next() !== NAME) return bad(lx);
      t = directives(lx, lx.next());
    } else if (t !== LBRACE) {
      // type-system definitions, extensions, stray tokens: not an executable document
      return bad(lx, t === NAME ? 'not-executable' : 'syntax');
    }
    if (t !== LBRACE) return bad(lx);
    t = rootSelections(lx, def, budget);
    if (t === ERR) return null;
    defs.push(def);
  }
  return defs;
}

/** Expand fragment spreads at the root into field names; null with a reason on failure. */
function resolve(defs: Def[], budget: { left: number }): ScanResult {
  const fragments = new Map<string, Def>();
  for (const d of defs) {
    if (d.type !== 'fragment') continue;
    if (fragments.has(d.name!)) return { ok: false, reason: 'duplicate-fragment' };
    fragments.set(d.name!, d);
  }
  const operations: ScannedOperation[] = [];
  for (const d of defs) {
    if (d.type === 'fragment') continue;
    const fields = new Set(d.fields);
    const seen = new Set<string>();
    const stack = [...d.spreads];
    while (stack.length > 0) {
      const name = stack.pop()!;
      if (seen.has(name)) continue; // a cycle is invalid GraphQL; the server refuses it
      seen.add(name);
      const f = fragments.get(name);
      if (f === undefined) return { ok: false, reason: 'unknown-fragment' };
      budget.left -= f.fields.length + f.spreads.length;
      if (budget.left < 0) return { ok: false, reason: 'root-field-limit' };
      for (const x of f.fields) fields.add(x);
      for (const x of f.spreads) stack.push(x);
    }
    operations.push({ type: d.type, name: d.name, rootFields: [...fields] });
  }
  if (operations.length === 0) return { ok: false, reason: defs.length === 0 ? 'empty' : 'no-operation' };
  return { ok: true, operations };
}

/** Scan one GraphQL document under the limits. Never throws. */
export function scanDocument(src: string, limits: Readonly<ScanLimits> = DEFAULT_SCAN_LIMITS): ScanResult {
  const lx = new Lexer(src, limits.maxTokens);
  const budget = { left: limits.maxRootEntries };
  const defs = definitions(lx, budget);
  if (defs === null) return { ok: false, reason: lx.error || 'syntax' };
  return resolve(defs, budget);
}
