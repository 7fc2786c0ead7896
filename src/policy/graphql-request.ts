/**
 * Reading the GraphQL request out of an HTTP request: a JSON body
 * `{query, operationName?, variables?}` or a JSON array batch, an `application/graphql`
 * body, or a query string `?query=&operationName=`. Anything else is unparsed, which classifies at
 * least write.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { type JsonRequest, parseJsonRequest, readJsonRequest } from './graphql/json.js';
import { DEFAULT_SCAN_LIMITS, scanDocument } from './graphql/scan.js';
import { maxClass } from './method.js';
import { lenientDecode } from './path-match.js';
import type { GraphqlInfo, GraphqlLimits, GraphqlOperation, WireClass } from './types.js';

/** Request bodies are at most 8 MiB; the classifier never reads past it. */
export const DEFAULT_BODY_CAP = 8 * 1024 * 1024;

/**
 * JSON bodies from this size on are read by the byte-level reader (json.ts) instead of
 * `JSON.parse`: below it `JSON.parse` is faster (a 2 KB gh body: ~1.7 µs); above it the
 * whole-body string and `JSON.parse`'s copy of every string dominate (8 MiB: ~12 ms vs ~3 ms).
 * Both give the same answer for every body; tests run every case through both.
 */
export const JSON_READER_MIN_BYTES = 32 * 1024;

/** The GraphQL request limits used when a manifest sets none. */
export const DEFAULT_GRAPHQL_LIMITS: Readonly<GraphqlLimits> = Object.freeze({
  ...DEFAULT_SCAN_LIMITS,
  bodyCap: DEFAULT_BODY_CAP,
});

export interface GraphqlVerdict {
  class: WireClass;
  reason: string;
  info: GraphqlInfo;
}

/** One {query, operationName} pair from any of the transports. */
interface Doc {
  query: unknown;
  operationName: unknown;
  extensions: unknown;
}

class Unparsed {
  constructor(readonly reason: string) {}
}

function unparsed(reason: string, batch = false, operationName?: string): GraphqlVerdict {
  const info: GraphqlInfo = { parsed: false, unparsedReason: reason, operations: [], batch };
  if (operationName !== undefined) info.operationName = operationName;
  return { class: 'write', reason: 'graphql-unparsed', info };
}

/** Scan one document and pick the executed operations (or all, when none is selected). */
function operationsOf(doc: Doc, index: number, limits: Readonly<GraphqlLimits>): GraphqlOperation[] {
  if (doc.query === undefined || doc.query === null) {
    const pq =
      typeof doc.extensions === 'object' && doc.extensions !== null && 'persistedQuery' in doc.extensions;
    throw new Unparsed(pq || doc.extensions !== undefined ? 'persisted-query' : 'missing-query');
  }
  if (typeof doc.query !== 'string') throw new Unparsed('bad-shape');
  if (
    doc.operationName !== undefined &&
    doc.operationName !== null &&
    typeof doc.operationName !== 'string'
  ) {
    throw new Unparsed('bad-shape');
  }
  const r = scanDocument(doc.query, limits);
  if (!r.ok) throw new Unparsed(r.reason);
  const name = typeof doc.operationName === 'string' ? doc.operationName : undefined;
  const named = name === undefined ? [] : r.operations.filter((o) => o.name === name);
  // An unknown or missing operationName with several operations: the server refuses it,
  // but count the highest of all in case it picks one anyway.
  const chosen = named.length > 0 ? named : r.operations;
  return chosen.map((o) => {
    const op: GraphqlOperation = { type: o.type, rootFields: o.rootFields, batchIndex: index };
    if (o.name !== undefined) op.name = o.name;
    return op;
  });
}

function verdict(docs: Doc[], batch: boolean, limits: Readonly<GraphqlLimits>): GraphqlVerdict {
  const first = docs[0]?.operationName;
  const opName = typeof first === 'string' ? first : undefined;
  try {
    const operations = docs.flatMap((d, i) => operationsOf(d, i, limits));
    let cls: WireClass = 'read';
    let reason = 'graphql-query';
    for (const o of operations) {
      if (o.type === 'mutation' && reason !== 'graphql-mutation') reason = 'graphql-mutation';
      else if (o.type === 'subscription' && reason === 'graphql-query') reason = 'graphql-subscription';
      if (o.type !== 'query') cls = 'write';
    }
    const info: GraphqlInfo = { parsed: true, operations, batch };
    if (opName !== undefined) info.operationName = opName;
    return { class: cls, reason, info };
  } catch (e) {
    if (e instanceof Unparsed) return unparsed(e.reason, batch, opName);
    throw e;
  }
}

/** `type/subtype` and charset of a Content-Type value, lower-cased. */
function mediaType(value: string | undefined): { type: string; charset: string | undefined } {
  if (value === undefined) return { type: '', charset: undefined };
  if (value === 'application/json') return { type: value, charset: undefined };
  if (value === 'application/json; charset=utf-8') return { type: 'application/json', charset: 'utf-8' };
  const parts = value.toLowerCase().split(';');
  let charset: string | undefined;
  for (const p of parts.slice(1)) {
    const [k, v] = p.split('=');
    if (k?.trim() === 'charset') charset = v?.trim().replace(/^"|"$/g, '');
  }
  return { type: parts[0]!.trim(), charset };
}

/**
 * The GraphQL parameters of a query string, by the name each server could read: a name counts
 * as `query` (and so on) after one more round of lenient percent-decoding (a server behind a
 * decoding proxy; IIS's `%u`), without leading whitespace or `?` (PHP drops leading spaces)
 * and in any case (ASP.NET Core's query collection ignores case: Hot Chocolate, GraphQL.NET).
 */
interface UrlParams {
  query: string[];
  operationName: string[];
  extensions: string[];
  variables: number;
  /** a persisted document by id: GraphQL over HTTP `documentId`, Hot Chocolate `id`, Relay `doc_id` */
  persisted: number;
  /** a parameter appears only when `;` also separates (Rack 2, Python before 3.9.2) */
  semicolon: boolean;
}

const PERSISTED_PARAMS: ReadonlySet<string> = new Set(['documentid', 'id', 'doc_id', 'queryid']);

function paramName(k: string): string {
  const n = k.includes('%') ? lenientDecode(k) : k;
  return n.replace(/^[\s?]+/, '').toLowerCase();
}

function isGraphqlParam(n: string): boolean {
  return (
    n === 'query' ||
    n === 'operationname' ||
    n === 'extensions' ||
    n === 'variables' ||
    PERSISTED_PARAMS.has(n)
  );
}

function readUrlParams(raw: string): UrlParams {
  const p: UrlParams = {
    query: [],
    operationName: [],
    extensions: [],
    variables: 0,
    persisted: 0,
    semicolon: false,
  };
  for (const [k, v] of new URLSearchParams(raw)) {
    const n = paramName(k);
    if (n === 'query') p.query.push(v);
    else if (n === 'operationname') p.operationName.push(v);
    else if (n === 'extensions') p.extensions.push(v);
    else if (n === 'variables') p.variables++;
    else if (PERSISTED_PARAMS.has(n)) p.persisted++;
  }
  if (raw.includes(';')) {
    for (const k of new URLSearchParams(raw.replace(/;/g, '&')).keys())
      if (isGraphqlParam(paramName(k))) p.semicolon = true;
  }
  return p;
}

/**
 * The body's reading: `application/json` (an object or a batch) or `application/graphql`.
 * `urlName` is the URL's operationName, if any.
 */
export function classifyGraphqlBody(
  headers: Readonly<Record<string, string>>,
  body: Buffer,
  urlName: string | undefined,
  limits: Readonly<GraphqlLimits> = DEFAULT_GRAPHQL_LIMITS,
  jsonReaderFrom = JSON_READER_MIN_BYTES,
): GraphqlVerdict {
  if (body.length > limits.bodyCap) return unparsed('size-limit');
  // a compressed body is decoded by the server and never by us
  const ce = headers['content-encoding'];
  if (ce !== undefined && ce.trim().toLowerCase() !== 'identity') return unparsed('content-encoding');
  const { type, charset } = mediaType(headers['content-type']);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return unparsed('charset');
  if (type !== 'application/json' && type !== 'application/graphql') return unparsed('content-type');
  // ASCII is valid UTF-8, and decodes as latin1 several times faster than as UTF-8
  const ascii = isAscii(body);
  if (!ascii && !isUtf8(body)) return unparsed('encoding');
  if (type === 'application/graphql') {
    const text = ascii ? body.toString('latin1') : body.toString('utf8');
    return verdict([{ query: text, operationName: urlName, extensions: undefined }], false, limits);
  }
  const json: JsonRequest | undefined =
    body.length >= jsonReaderFrom
      ? readJsonRequest(body, ascii)
      : parseJsonRequest(ascii ? body.toString('latin1') : body.toString('utf8'));
  if (json === undefined) return unparsed('not-json');
  const { batch, items } = json;
  if (items.length === 0) return unparsed('empty-batch', true);
  const docs: Doc[] = [];
  for (const it of items) {
    if (it === undefined) return unparsed('bad-shape', batch);
    // `{"query":…,"query":…}` or `{"query":…,"Query":…}`: first-wins, last-wins and
    // case-insensitive parsers would each run another document or operation
    if (it.keyClash) return unparsed('duplicate-key', batch);
    let operationName = it.operationName;
    // both the URL and the body name an operation and disagree: servers differ on which wins
    if (urlName !== undefined && operationName !== urlName) operationName = undefined;
    docs.push({ query: it.query, operationName, extensions: it.extensions });
  }
  return verdict(docs, batch, limits);
}

/** A GraphQL POST: the body decides (`body` undefined: it was not read). */
export function classifyGraphqlPost(
  headers: Readonly<Record<string, string>>,
  query: string | undefined,
  body: Buffer | undefined,
  limits: Readonly<GraphqlLimits> = DEFAULT_GRAPHQL_LIMITS,
  jsonReaderFrom = JSON_READER_MIN_BYTES,
): GraphqlVerdict {
  // gh sends no query string on POST /graphql; skip URLSearchParams then (hot path).
  const url = query === undefined || query === '' ? undefined : readUrlParams(query);
  // express-graphql reads ?query= before the body, Rails merges query parameters over body
  // ones: two sources, two possible answers.
  if (url !== undefined && url.query.length + url.extensions.length + url.variables + url.persisted > 0)
    return unparsed('ambiguous-source');
  if (url?.semicolon) return unparsed('bad-query-string');
  const urlNames = url === undefined ? [] : url.operationName;
  if (urlNames.length > 1) return unparsed('duplicate-param');
  if (body === undefined) return unparsed('no-body');
  return classifyGraphqlBody(headers, body, urlNames[0], limits, jsonReaderFrom);
}

/**
 * The query string's reading (`?query=&operationName=`), for any method but POST.
 * Undefined when it carries no GraphQL at all (a GraphiQL page, say).
 */
export function classifyGraphqlUrl(
  query: string | undefined,
  limits: Readonly<GraphqlLimits> = DEFAULT_GRAPHQL_LIMITS,
): GraphqlVerdict | undefined {
  const raw = query ?? '';
  if (raw === '') return undefined;
  const p = readUrlParams(raw);
  const { query: queries, operationName: names, extensions } = p;
  if (queries.length === 0 && extensions.length === 0 && p.persisted === 0 && !p.semicolon) return undefined;
  if (p.semicolon || /%(?![0-9a-fA-F]{2})/.test(raw)) return unparsed('bad-query-string');
  if (raw.length > limits.bodyCap) return unparsed('size-limit');
  if (queries.length > 1 || names.length > 1 || extensions.length > 1) return unparsed('duplicate-param');
  // a stored document by id runs whatever it holds, even beside a query (servers differ on which wins)
  if (p.persisted > 0) return unparsed('persisted-query');
  return verdict([{ query: queries[0], operationName: names[0], extensions: extensions[0] }], false, limits);
}

/** The URL's single operationName (undefined when absent), or null when it is repeated or split by `;`. */
export function urlOperationName(query: string | undefined): string | undefined | null {
  if (query === undefined || query === '' || !/operationname/i.test(query)) return undefined;
  const p = readUrlParams(query);
  return p.operationName.length > 1 || p.semicolon ? null : p.operationName[0];
}

/**
 * Two readings of one request (a GET's query string and its body): the higher class wins,
 * and the operations of both count; unparsed if either is.
 */
export function combineVerdicts(a: GraphqlVerdict, b: GraphqlVerdict): GraphqlVerdict {
  const parsed = a.info.parsed && b.info.parsed;
  const rank = (v: GraphqlVerdict): number =>
    !v.info.parsed ? 3 : v.reason === 'graphql-mutation' ? 2 : v.reason === 'graphql-subscription' ? 1 : 0;
  const top = rank(a) >= rank(b) ? a : b;
  const info: GraphqlInfo = {
    parsed,
    operations: [...a.info.operations, ...b.info.operations],
    batch: a.info.batch || b.info.batch,
  };
  const why = a.info.unparsedReason ?? b.info.unparsedReason;
  if (why !== undefined) info.unparsedReason = why;
  const name = a.info.operationName ?? b.info.operationName;
  if (name !== undefined) info.operationName = name;
  return { class: maxClass(a.class, b.class), reason: top.reason, info };
}

/** An unparsed verdict with a reason (exported for classify's own cases). */
export function unparsedVerdict(reason: string): GraphqlVerdict {
  return unparsed(reason);
}
