/**
 * Method overrides carried as parameters: `_method=DELETE` in the query string or in an
 * `application/x-www-form-urlencoded` body makes Rails (Rack::MethodOverride), Laravel and
 * Symfony, Spring (HiddenHttpMethodFilter), Express method-override and Jersey route a POST
 * as DELETE. The engine strips the override headers; a parameter cannot be stripped
 * without changing the request the child sent, so it is refused — always, whatever method
 * it names and whatever the request would otherwise be: one rule with no exception is the
 * reading that is safe for every server.
 */
import { brokerError } from '../errors.js';
import { lenientDecode } from './path-match.js';

/**
 * A parameter name servers read as a method override, after they decode it: `_method` in
 * any case, `%`-encoded or `+`-spaced, with leading whitespace (PHP drops it), with `.`, ` `
 * or `[` for the underscore (PHP turns them into `_`), with an array suffix (`_method[]`)
 * or trailing whitespace; and the override headers' names used as parameters.
 */
const OVERRIDE_NAME =
  /^[_. [](?:method)(?:[\s\0]*$|\[)|^x-(?:http-method(?:-override)?|method-override)[\s\0]*$/;

function isOverrideName(raw: string): boolean {
  // decoding only shortens a name, and the shortest override is `_method`
  if (raw.length < 7) return false;
  let name = raw.replace(/\+/g, ' ');
  // two rounds: a proxy that decodes before forwarding, then the server
  for (let r = 0; r < 2 && name.includes('%'); r++) name = lenientDecode(name);
  return OVERRIDE_NAME.test(name.trimStart().toLowerCase());
}

const CANDIDATE = /method|%/gi;
const SEPARATOR = /[&;]/g;

/**
 * The first method-override parameter of a `&`/`;`-separated parameter string (Rack and
 * older Python split on both), or undefined. Only parameters whose text holds `method` or a
 * `%` are looked at, each once, so an 8 MiB form of a million fields costs one pass and no
 * array of them.
 */
export function overrideParam(params: string): string | undefined {
  CANDIDATE.lastIndex = 0;
  let prevEnd = 0;
  for (let m = CANDIDATE.exec(params); m !== null; m = CANDIDATE.exec(params)) {
    let start = m.index;
    while (start > prevEnd && params.charCodeAt(start - 1) !== 38 && params.charCodeAt(start - 1) !== 59)
      start--;
    SEPARATOR.lastIndex = m.index;
    const sep = SEPARATOR.exec(params);
    const end = sep === null ? params.length : sep.index;
    const part = params.slice(start, end);
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    if (name !== '' && isOverrideName(name)) return name;
    prevEnd = end;
    CANDIDATE.lastIndex = end;
  }
  return undefined;
}

/** The media type of a Content-Type value, lower-cased, and its charset parameter. */
function contentType(value: string | undefined): { type: string; charset: string | undefined } {
  if (value === undefined) return { type: '', charset: undefined };
  const parts = value.toLowerCase().split(';');
  let charset: string | undefined;
  for (const p of parts.slice(1)) {
    const eq = p.indexOf('=');
    if (eq !== -1 && p.slice(0, eq).trim() === 'charset')
      charset = p
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, '');
  }
  return { type: parts[0]!.trim(), charset };
}

/**
 * Whether servers may parse this body as form fields: declared urlencoded (in any spelling,
 * any method), or a POST with no Content-Type at all (Rack parses a typeless POST body as a
 * form; a typeless PUT upload is no form anywhere, and keeps streaming).
 */
export function isFormBody(method: string, headers: Readonly<Record<string, string>>): boolean {
  const ct = headers['content-type'];
  if (ct === undefined || ct.trim() === '') return method.toUpperCase() === 'POST';
  return /x-www-form-urlencoded/i.test(ct);
}

const ASCII_CHARSETS: ReadonlySet<string> = new Set([
  'utf-8',
  'utf8',
  'us-ascii',
  'ascii',
  'iso-8859-1',
  'latin1',
  'windows-1252',
]);

function refuse(where: string, detail: string): never {
  throw brokerError('CLI_METHOD_OVERRIDE_REFUSED', { detail, where });
}

/**
 * Refuse a request that carries a method override in its query string or in a form body
 * (`body` as the engine read it; undefined when it was not read, as for JSON bodies).
 */
export function refuseMethodOverride(
  method: string,
  query: string | undefined,
  headers: Readonly<Record<string, string>>,
  body: Buffer | undefined,
): void {
  if (query !== undefined && query !== '' && overrideParam(query) !== undefined)
    refuse('query string', 'the request carries a _method override parameter');
  if (body === undefined || body.length === 0 || !isFormBody(method, headers)) return;
  const ce = headers['content-encoding'];
  if (ce !== undefined && ce.trim().toLowerCase() !== 'identity')
    refuse('form body', 'a compressed form body cannot be checked for a _method override');
  const { charset } = contentType(headers['content-type']);
  if (charset !== undefined && !ASCII_CHARSETS.has(charset))
    refuse(
      'form body',
      `a form body in charset ${JSON.stringify(charset.slice(0, 40))} cannot be checked for a _method override`,
    );
  if (overrideParam(body.toString('latin1')) !== undefined)
    refuse('form body', 'the request carries a _method override field');
}
