/**
 * One HTTP/1.1 exchange with the broker daemon over a fresh unix-socket connection, written
 * with node:net alone, and the socket directory's check that comes before it. No error
 * catalogue, no node:http: `clibroker run`'s fast path (src/commands/fast-run.ts) loads this
 * and little else, and the thin client (`./client.ts`) turns its outcomes into coded errors,
 * so both read the daemon's answer with the same code.
 *
 * An outcome says which side of the moment the request could have gone out a failure fell:
 * before the connection was made nothing was sent, after it the daemon may have run the call.
 * node:http is not used because loading it (with its agent, parser and header checks) cost
 * about 4.5 ms of every `clibroker run`, and the exchange needs one request, `Connection:
 * close`, and an answer framed by its length, chunked, or ended by the close.
 */
import { realpath, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { looseAncestors, octal } from '../config/path-trust.js';

export interface DaemonAddress {
  /** the unix socket path */
  socket: string;
  /** the executor token, sent as `Authorization: Bearer`; never logged, never in argv */
  token?: string;
  /** give up after this long (default: wait as long as the daemon's run takes) */
  timeoutMs?: number;
}

/** The largest answer read (stdout and stderr are at most 2 MiB together, JSON-escaped). */
export const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** The largest answer head read: node's own default. */
const MAX_HEAD_BYTES = 16 * 1024;

/** How one exchange ended. */
export type CallOutcome =
  /** the connection was never made: nothing was sent */
  | { sent: false; errno: string | undefined }
  /** connected, so the request may have gone out, but no whole answer came back: why */
  | { sent: true; lost: string }
  /** the daemon's answer, its body de-chunked */
  | { sent: true; status: number; body: Buffer };

// what a header value may hold (node's own rule): a token with a line break would add a header
const HEADER_VALUE_RE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** True when `token` can travel in the Authorization header as it is. */
export function sendableToken(token: string): boolean {
  return HEADER_VALUE_RE.test(token);
}

/**
 * The request's bytes, as node:http wrote them for the same call (the wire did not change when
 * the client stopped using it; tests/daemon/client-wire.test.ts).
 */
function requestBytes(
  addr: DaemonAddress,
  method: 'GET' | 'POST',
  path: string,
  payload: Buffer | undefined,
): Buffer {
  const auth = addr.token ? `authorization: Bearer ${addr.token}\r\n` : '';
  const head = payload
    ? `${method} ${path} HTTP/1.1\r\nhost: clibroker\r\ncontent-type: application/json\r\ncontent-length: ${payload.length}\r\n${auth}Connection: close\r\n\r\n`
    : `${method} ${path} HTTP/1.1\r\nhost: clibroker\r\n${auth}Connection: close\r\n${method === 'POST' ? 'Content-Length: 0\r\n' : ''}\r\n`;
  const bytes = Buffer.from(head, 'latin1');
  return payload ? Buffer.concat([bytes, payload]) : bytes;
}

/**
 * One request through a fresh connection, and its answer.
 * @throws TypeError ERR_INVALID_CHAR when the token cannot be a header value (nothing connects)
 */
export function exchange(
  addr: DaemonAddress,
  method: 'GET' | 'POST',
  path: string,
  payload?: Buffer,
): Promise<CallOutcome> {
  if (addr.token !== undefined && !sendableToken(addr.token))
    return Promise.reject(
      Object.assign(new TypeError('Invalid character in header content ["authorization"]'), {
        code: 'ERR_INVALID_CHAR',
      }),
    );
  const request = requestBytes(addr, method, path, payload);
  return new Promise<CallOutcome>((resolve) => {
    // the idle timeout an agent would set; one connection per call, never kept for another
    const socket = connect({ path: addr.socket, ...(addr.timeoutMs ? { timeout: addr.timeoutMs } : {}) });
    const answer = new AnswerReader();
    let sent = false;
    let done = false;
    const finish = (outcome: CallOutcome): void => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(outcome);
    };
    const lost = (code: string): void =>
      finish(
        answer.headRead
          ? { sent: true, lost: 'ended the connection in the middle of its answer' }
          : { sent: true, lost: `ended the connection before answering (${code})` },
      );
    socket.once('connect', () => {
      sent = true;
      socket.write(request);
    });
    socket.on('data', (chunk: Buffer) => {
      if (done) return;
      const state = answer.feed(chunk);
      if (typeof state === 'string') finish({ sent: true, lost: state });
      else if (state) finish({ sent: true, status: answer.status, body: answer.body() });
    });
    socket.once('timeout', () => {
      if (!sent) finish({ sent: false, errno: 'ETIMEDOUT' });
      else lost('ETIMEDOUT');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      if (!sent) finish({ sent: false, errno: e.code });
      else lost(e.code ?? 'error');
    });
    // the daemon closed its side: the end of an answer framed by the close, else a cut
    socket.once('end', () => {
      if (answer.closeEnds()) finish({ sent: true, status: answer.status, body: answer.body() });
      else lost('ECONNRESET');
    });
    socket.once('close', () => {
      if (!sent) finish({ sent: false, errno: undefined });
      else lost('ECONNRESET');
    });
  });
}

/** The answer's JSON envelope, when its body is JSON. */
export function replyOf(outcome: CallOutcome): unknown {
  if (!('body' in outcome)) return undefined;
  try {
    return JSON.parse(outcome.body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The `result` of a successful answer (`{ok: true, result}`), or undefined for anything else. */
export function resultOf(outcome: CallOutcome): { result: unknown } | undefined {
  const reply = replyOf(outcome) as { ok?: unknown; result?: unknown } | undefined;
  return reply?.ok === true && 'result' in reply ? { result: reply.result } : undefined;
}

/**
 * Reads one HTTP/1.1 answer as its bytes arrive: the head (interim 1xx answers skipped),
 * then a body framed by content-length, by chunks, or by the close. Strict: what it does not
 * understand ends the exchange as a broken answer, never as a guess.
 */
class AnswerReader {
  status = 0;
  headRead = false;
  private head: Buffer = Buffer.alloc(0);
  private mode: 'length' | 'chunked' | 'close' = 'close';
  /** bytes left of the body (length) or of the current chunk (chunked) */
  private left = 0;
  private chunkState: 'size' | 'data' | 'data-end' | 'trailer' = 'size';
  private line: Buffer = Buffer.alloc(0);
  private parts: Buffer[] = [];
  private size = 0;

  /** true when the answer is whole, a reason when it is broken, false for more to come */
  feed(chunk: Buffer): boolean | string {
    let rest = chunk;
    while (!this.headRead) {
      const buf = this.head.length ? Buffer.concat([this.head, rest]) : rest;
      const at = buf.indexOf('\r\n\r\n');
      if (at < 0) {
        if (buf.length > MAX_HEAD_BYTES) return `answered a head over ${MAX_HEAD_BYTES} bytes`;
        this.head = buf;
        return false;
      }
      const problem = this.readHead(buf.subarray(0, at).toString('latin1'));
      if (problem) return problem;
      this.head = Buffer.alloc(0);
      rest = buf.subarray(at + 4);
    }
    return this.mode === 'chunked' ? this.feedChunked(rest) : this.take(rest);
  }

  /** True when the close is how this answer ends (no length, no chunks), so it is whole now. */
  closeEnds(): boolean {
    return this.headRead && this.mode === 'close';
  }

  body(): Buffer {
    return Buffer.concat(this.parts, this.size);
  }

  private readHead(text: string): string | undefined {
    const [line = '', ...fields] = text.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(line);
    if (!m) return 'answered something that is not HTTP/1.1';
    const status = Number(m[1]);
    let length: number | undefined;
    let chunked = false;
    for (const field of fields) {
      const colon = field.indexOf(':');
      if (colon <= 0) return 'answered a malformed header';
      const name = field.slice(0, colon).trim().toLowerCase();
      const value = field.slice(colon + 1).trim();
      if (name === 'content-length') {
        if (!/^\d{1,15}$/.test(value) || (length !== undefined && length !== Number(value)))
          return 'answered a malformed content-length';
        length = Number(value);
      } else if (name === 'transfer-encoding') {
        if (value.toLowerCase() !== 'chunked') return `answered a transfer-encoding it cannot read`;
        chunked = true;
      }
    }
    // an interim answer (100 Continue): the real one follows
    if (status >= 100 && status < 200 && status !== 101) return undefined;
    this.headRead = true;
    this.status = status;
    if (chunked) this.mode = 'chunked';
    else if (length !== undefined || status === 204 || status === 304) {
      this.mode = 'length';
      this.left = length ?? 0;
    }
    return undefined;
  }

  /** Body bytes of a length-framed or close-framed answer. */
  private take(rest: Buffer): boolean | string {
    if (this.mode === 'length') {
      const piece = rest.subarray(0, this.left);
      this.left -= piece.length;
      const over = this.keep(piece);
      return over ?? this.left === 0;
    }
    return this.keep(rest) ?? false;
  }

  private keep(piece: Buffer): string | undefined {
    if (!piece.length) return undefined;
    this.size += piece.length;
    if (this.size > MAX_REPLY_BYTES) return `answered more than ${MAX_REPLY_BYTES} bytes`;
    this.parts.push(piece);
    return undefined;
  }

  /** The chunked framing: `<hex size>[;ext]\r\n<data>\r\n` … `0\r\n[trailers]\r\n`. */
  private feedChunked(buf: Buffer): boolean | string {
    let rest = buf;
    while (rest.length) {
      if (this.chunkState === 'data') {
        const piece = rest.subarray(0, this.left);
        this.left -= piece.length;
        rest = rest.subarray(piece.length);
        const over = this.keep(piece);
        if (over) return over;
        if (this.left === 0) this.chunkState = 'data-end';
        continue;
      }
      const nl = rest.indexOf('\n');
      const line = Buffer.concat([this.line, nl < 0 ? rest : rest.subarray(0, nl + 1)]);
      if (line.length > 1024) return 'answered a malformed chunk';
      if (nl < 0) {
        this.line = line;
        return false;
      }
      this.line = Buffer.alloc(0);
      rest = rest.subarray(nl + 1);
      const text = line.toString('latin1');
      if (!text.endsWith('\r\n')) return 'answered a malformed chunk';
      if (this.chunkState === 'data-end') {
        if (text !== '\r\n') return 'answered a malformed chunk';
        this.chunkState = 'size';
      } else if (this.chunkState === 'size') {
        const m = /^([0-9a-fA-F]{1,8})(?:;[^\r\n]*)?\r\n$/.exec(text);
        if (!m) return 'answered a malformed chunk';
        this.left = Number.parseInt(m[1]!, 16);
        this.chunkState = this.left === 0 ? 'trailer' : 'data';
      } else if (text === '\r\n') return true;
    }
    return false;
  }
}

/** A directory on the socket's path that lets someone other than the daemon replace the socket. */
export interface SocketDirProblem {
  directory: string;
  why: string;
}

/**
 * Why the socket at `socket` could be an impostor, from the calling user's side; undefined
 * when its path is safe (or cannot be examined: then connecting fails and says so).
 *
 * The daemon's user is not known here, so the owner of the socket's directory stands for it,
 * and the path must pass the daemon's own rule for that owner (sshd's StrictModes: every
 * directory up to `/` owned by root or that owner and not writable by group or other, a
 * sticky directory above the socket's own excepted). On top, no directory on the path may
 * belong to the calling user, unless that user is root: a directory the caller owns is one
 * it can write, and a daemon that is a separate user never serves from it. Root owns `/` and
 * every system directory and can replace any socket anyway, so for root only the first rule
 * applies. Mode bits are read; ACLs are not.
 * @param uid the calling user (default the effective uid; no check where the platform has none)
 */
export async function socketDirProblem(
  socket: string,
  uid = process.geteuid?.(),
): Promise<SocketDirProblem | undefined> {
  if (uid === undefined) return undefined;
  let owner: number;
  try {
    owner = (await stat(dirname(socket))).uid;
  } catch {
    return undefined;
  }
  const loose = (await looseAncestors(socket, owner)).find((l) => l.uid !== -1);
  if (loose) return { directory: loose.directory, why: loose.why };
  if (uid === 0) return undefined;
  for (const directory of await directoriesOf(dirname(socket))) {
    const st = await stat(directory).catch(() => undefined);
    if (st?.uid === uid)
      return {
        directory,
        why: `is owned by this user (uid ${uid}, mode ${octal(st.mode)}), who could replace the socket`,
      };
  }
  return undefined;
}

/** `dir` and every directory above it, then those of its real path where it differs. */
async function directoriesOf(dir: string): Promise<string[]> {
  const up = (from: string): string[] => {
    const out = [from];
    for (let d = from; dirname(d) !== d; d = dirname(d)) out.push(dirname(d));
    return out;
  };
  const real = await realpath(dir).catch(() => dir);
  return real === dir ? up(dir) : [...up(dir), ...up(real)];
}
