/**
 * The reader and writer inside a tunnel: request heads are read off the decrypted socket
 * with the strict head parser (head-parser.ts), bodies by their framing (Content-Length, or
 * the chunked decoder), and each request is handed to the request handler the reader was
 * given (the pipeline, pipeline.ts) as a small request and response object of our own in
 * place of node's IncomingMessage and ServerResponse — only what the pipeline and
 * refusal.ts use. The reader never imports the pipeline and never writes its context.
 *
 * Pipelined requests are all handed on as soon as their heads are read (each may reach
 * the vendor), and their answers go out in the order asked: a response that is not at the
 * front of the line keeps what it writes until every earlier one has gone out. That
 * bookkeeping is the reader's own: a refusal it writes raw onto the socket waits for it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { EventEmitter } from 'node:events';
import { BrokerError, brokerError } from '../errors.js';
import { ChunkedDecoder, type ChunkedRefusal } from './http1/chunked.js';
import type { BrokerEnv, Tunnel, TunnelSocket } from './env.js';
import { auditRefusal } from './exchange.js';
import { HeadParser, type HeadRefusal, type ParsedHead } from './http1/head-parser.js';
import { endWithin, writeRawRefusal } from './refusal.js';
import type { Limits } from './types.js';

/** Tunnels belong to one session and end with it; an idle keep-alive connection can wait long. */
const KEEP_ALIVE_IDLE_MS = 60_000;

/** A field name: an RFC 9110 token. */
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A byte no field value or reason phrase may hold (node's own check): controls but HTAB. */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** Bytes a response not yet at the front of the line keeps before it asks its writer to wait. */
const QUEUED_HIGH_WATER = 64 * 1024;

/**
 * What the reader hands every request it reads to (the pipeline): it answers on `res`, and
 * its promise settles once the request is done with, audited included.
 */
/** Returns a promise only while a phase waits; that one answers and audits its own failures too. */
export type RequestHandler = (req: InnerRequest, res: InnerResponse) => Promise<void> | undefined;

/**
 * Who handles a body the chunked decoder refused: the handler took it as its request's own
 * refusal and answered it (`answered`: the reader stops the body), or found the vendor's
 * answer already begun (`cut`: the reader cuts the connection).
 */
export type BodyRefusalTaken = 'answered' | 'cut';

/** A request read off the tunnel: what the pipeline reads of node's IncomingMessage. */
export class InnerRequest extends Readable {
  readonly method: string;
  readonly url: string;
  readonly httpVersion: string;
  readonly rawHeaders: string[];
  readonly socket: TunnelSocket;
  /** the child sent `Expect: 100-continue` */
  readonly expectContinue: boolean;
  /** the whole body arrived */
  complete = false;
  /**
   * Set by the handler while the request is its own (until it is audited): a body refused
   * then is told to it, and it records and answers the refusal. Unset, the reader answers
   * the refusal raw on the socket, as a request of its own.
   */
  onBodyRefused: ((refusal: BrokerError) => BodyRefusalTaken) | undefined;
  private headerObject: IncomingHttpHeaders | undefined;
  private readonly conn: Connection;
  /** set while a relay takes the body straight from the reader ({@link relayBody}) */
  relayData: ((chunk: Buffer) => void) | undefined;
  private relayEnd: (() => void) | undefined;
  private relayPaused = false;

  constructor(conn: Connection, head: ParsedHead) {
    super({ highWaterMark: 64 * 1024 });
    this.conn = conn;
    this.socket = conn.socket;
    this.method = head.method;
    this.url = head.target;
    this.httpVersion = head.version;
    this.rawHeaders = head.headers;
    this.expectContinue = head.expectContinue;
  }

  /** Lower-cased names; a repeated field's values joined with ', ' (set-cookie: a list), as node does. */
  get headers(): IncomingHttpHeaders {
    if (this.headerObject) return this.headerObject;
    const h: Record<string, string | string[]> = Object.create(null);
    const raw = this.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toLowerCase();
      const value = raw[i + 1]!;
      const had = h[name];
      if (had === undefined) h[name] = name === 'set-cookie' ? [value] : value;
      else if (Array.isArray(had)) had.push(value);
      else h[name] = `${had}, ${value}`;
    }
    this.headerObject = h;
    return h;
  }

  override _read(): void {
    this.conn.resumeReading();
  }

  /**
   * Hands the rest of the body to `onData` run by run as the reader reads it (a range of the
   * decrypted chunk, never copied), then calls `onEnd` once it is complete: no stream buffer,
   * no tick and no event per chunk between the child's socket and the vendor's. What the
   * stream already holds goes first. A body cut short is still told as the stream's `error`
   * and `close`; {@link stopRelay} hands the rest back to the stream.
   */
  relayBody(onData: (chunk: Buffer) => void, onEnd: () => void): void {
    for (let held = this.read() as Buffer | null; held !== null; held = this.read() as Buffer | null)
      onData(held);
    if (this.destroyed) return;
    if (this.complete) {
      onEnd();
      this.resume(); // as a flowing stream would: 'end', then 'close'
      return;
    }
    this.relayData = onData;
    this.relayEnd = onEnd;
    this.conn.resumeReading();
  }

  /** The relay is done with the body: what is left of it goes to the stream, as before it began. */
  stopRelay(): void {
    if (this.relayData === undefined) return;
    this.relayData = undefined;
    this.relayEnd = undefined;
    if (this.relayPaused) {
      this.relayPaused = false;
      this.conn.resumeReading();
    }
  }

  /** The relay's writer is full: the child's socket is read no further until {@link resumeRelay}. */
  pauseRelay(): void {
    if (this.relayData === undefined || this.relayPaused) return;
    this.relayPaused = true;
    this.conn.pauseReading();
  }

  resumeRelay(): void {
    if (!this.relayPaused) return;
    this.relayPaused = false;
    this.conn.resumeReading();
  }

  /** The reader read the body's last byte: the relay hears its end, and the stream ends as it would have. */
  relayComplete(): boolean {
    const end = this.relayEnd;
    if (end === undefined) return false;
    this.relayData = undefined;
    this.relayEnd = undefined;
    this.relayPaused = false;
    end();
    return true;
  }

  /** As node's request: a body cut by the child's leaving is an error only to whoever listens for one. */
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.relayData = undefined;
    this.relayEnd = undefined;
    cb(err && this.listenerCount('error') > 0 ? err : null);
  }
}

type Pending = { data: Buffer | string; encoding?: BufferEncoding };

/** The answer to one request: what the pipeline and refusal.ts use of node's ServerResponse. */
export class InnerResponse extends EventEmitter {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  readonly req: InnerRequest;
  private readonly conn: Connection;
  private readonly head: ParsedHead;
  private readonly fields = new Map<string, [string, string | string[]]>();
  /** the status line and fields, waiting to go out with the first body bytes */
  private headText: string | undefined;
  private chunked = false;
  private noBody = false;
  /** the connection closes after this answer */
  closeAfter = false;
  private sent100 = false;
  /** what was written while an earlier answer still goes out */
  private queued: Pending[] = [];
  private queuedBytes = 0;
  private needDrain = false;
  private endQueued = false;

  constructor(conn: Connection, req: InnerRequest, head: ParsedHead) {
    super();
    this.conn = conn;
    this.req = req;
    this.head = head;
    this.closeAfter = head.connectionClose;
  }

  get socket(): TunnelSocket | null {
    return this.destroyed ? null : this.conn.socket;
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    if (!TOKEN_RE.test(name)) throw new TypeError('setHeader: invalid header name');
    if (Array.isArray(value) ? value.some((x) => BAD_VALUE.test(x)) : BAD_VALUE.test(String(value)))
      throw new TypeError(`setHeader: invalid value for header ${name}`);
    this.fields.set(name.toLowerCase(), [
      name,
      typeof value === 'number' ? String(value) : (value as string),
    ]);
    return this;
  }

  getHeader(name: string): string | string[] | undefined {
    return this.fields.get(name.toLowerCase())?.[1];
  }

  writeContinue(): void {
    if (this.headersSent || this.sent100) return;
    this.sent100 = true;
    this.send('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');
  }

  writeHead(
    status: number,
    message?: string | Record<string, string | string[] | number>,
    headers?: Record<string, string | string[] | number>,
  ): this {
    if (this.headersSent) throw new Error('writeHead: headers already sent');
    if (typeof message === 'object') {
      headers = message;
      message = undefined;
    }
    // As node's writer: a name or value that could end the line early is never written, and a
    // head refused here leaves the response as it was (a refusal can still be answered).
    const reason = message ?? this.statusMessage;
    if (!Number.isInteger(status) || status < 100 || status > 999 || BAD_VALUE.test(reason))
      throw new TypeError('writeHead: invalid status');
    if (headers)
      for (const k of Object.keys(headers)) {
        const v = headers[k]!;
        if (!TOKEN_RE.test(k)) throw new TypeError('writeHead: invalid header name');
        if (Array.isArray(v) ? v.some((x) => BAD_VALUE.test(x)) : BAD_VALUE.test(String(v)))
          throw new TypeError(`writeHead: invalid value for header ${k}`);
      }
    this.statusCode = status;
    this.statusMessage = reason;
    if (headers)
      for (const k of Object.keys(headers)) {
        const v = headers[k]!;
        this.fields.set(k.toLowerCase(), [k, typeof v === 'number' ? String(v) : v]);
      }
    const conn = this.fields.get('connection');
    if (conn && /(?:^|,)\s*close\s*(?:,|$)/i.test(String(conn[1]))) this.closeAfter = true;
    let text = `HTTP/1.1 ${status} ${this.statusMessage}\r\n`;
    for (const [field, value] of this.fields.values()) {
      if (Array.isArray(value)) for (const v of value) text += `${field}: ${v}\r\n`;
      else text += `${field}: ${value}\r\n`;
    }
    this.closeHead(text, this.fields.has('content-length'), conn !== undefined);
    return this;
  }

  /**
   * The vendor's head as the upstream client read it. `flat` is [name, value, …] that the
   * strict response parser already checked (names are tokens, values and the reason hold no
   * control character), so nothing is checked again and no header object is built: the
   * fields go out in the vendor's order, names lower-cased, but those in `drop` (lower-case
   * hop-by-hop names) and those the vendor's Connection field names. Framing as {@link writeHead}. For a response with no field set before it.
   */
  writeVendorHead(status: number, reason: string, flat: readonly string[], drop: ReadonlySet<string>): void {
    if (this.headersSent) throw new Error('writeHead: headers already sent');
    if (this.fields.size > 0) throw new Error('writeVendorHead: fields were set before it');
    this.statusCode = status;
    this.statusMessage = reason;
    let text = `HTTP/1.1 ${status} ${reason}\r\n`;
    // and the fields the vendor's Connection names: they were for the hop to us
    let named: Set<string> | undefined;
    for (let i = 0; i < flat.length; i += 2)
      if (flat[i]!.length === 10 && flat[i]!.toLowerCase() === 'connection') {
        named ??= new Set();
        for (const token of flat[i + 1]!.split(',')) named.add(token.trim().toLowerCase());
      }
    let hasLength = false;
    for (let i = 0; i < flat.length; i += 2) {
      const field = flat[i]!.toLowerCase();
      if (drop.has(field) || named?.has(field)) continue;
      if (field === 'content-length') hasLength = true;
      text += `${field}: ${flat[i + 1]!}\r\n`;
    }
    this.closeHead(text, hasLength, false);
  }

  /** The framing for the body and the end of the head, which goes out with the first body bytes. */
  private closeHead(fields: string, hasLength: boolean, hasConnection: boolean): void {
    let text = fields;
    const status = this.statusCode;
    this.headersSent = true;
    const method = this.head.method;
    this.noBody = method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);
    // A child still waiting to be told to send its body never sends it: the connection ends.
    if (this.head.expectContinue && !this.sent100) this.closeAfter = true;
    if (!hasLength && !this.noBody) {
      if (this.closeAfter) {
        // close-delimited: the end of the connection is the end of the body
      } else {
        this.chunked = true;
        text += 'transfer-encoding: chunked\r\n';
      }
    }
    if (this.closeAfter && !hasConnection) text += 'connection: close\r\n';
    this.headText = `${text}\r\n`;
  }

  write(chunk: Buffer | string, encoding?: BufferEncoding | (() => void)): boolean {
    if (this.writableEnded || this.destroyed) return false;
    if (!this.headersSent) this.writeHead(this.statusCode, this.statusMessage);
    const enc = typeof encoding === 'string' ? encoding : undefined;
    if (this.noBody) return true;
    const len = typeof chunk === 'string' ? Buffer.byteLength(chunk, enc) : chunk.length;
    if (len === 0) return true;
    return this.sendBody(chunk, enc, len);
  }

  end(chunk?: Buffer | string | (() => void)): this {
    if (this.writableEnded || this.destroyed) return this;
    if (!this.headersSent) {
      if (chunk !== undefined && typeof chunk !== 'function' && !this.fields.has('content-length'))
        this.setHeader(
          'content-length',
          String(typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length),
        );
      else if (chunk === undefined && !this.fields.has('content-length') && !this.noBodyFor(this.statusCode))
        this.setHeader('content-length', '0');
      this.writeHead(this.statusCode, this.statusMessage);
    }
    if (chunk !== undefined && typeof chunk !== 'function') this.write(chunk);
    this.writableEnded = true;
    if (this.chunked) this.send('0\r\n\r\n', 'latin1');
    else if (this.headText !== undefined) this.send('', 'latin1');
    this.endQueued = true;
    this.conn.ended(this);
    return this;
  }

  private noBodyFor(status: number): boolean {
    return this.head.method === 'HEAD' || status === 204 || status === 304;
  }

  /** Cuts the answer, and so the connection (as node's does): the child sees an error, not a short success. */
  destroy(_err?: unknown): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.conn.socket.destroy();
    return this;
  }

  private sendBody(chunk: Buffer | string, enc: BufferEncoding | undefined, len: number): boolean {
    if (!this.chunked) return this.send(chunk, enc);
    this.send(`${len.toString(16)}\r\n`, 'latin1');
    this.send(chunk, enc);
    return this.send('\r\n', 'latin1');
  }

  /** Out now when this answer is at the front of the line, else kept until it is. */
  private send(data: Buffer | string, encoding?: BufferEncoding): boolean {
    if (this.headText !== undefined) {
      const head = this.headText;
      this.headText = undefined;
      if (this.conn.isFront(this)) this.conn.write(head, 'latin1');
      else this.keep(head, 'latin1');
    }
    if (data.length === 0) return true;
    if (this.conn.isFront(this)) return this.afterWrite(this.conn.write(data, encoding));
    return this.keep(data, encoding);
  }

  private afterWrite(ok: boolean): boolean {
    if (!ok) {
      this.needDrain = true;
      this.conn.waitDrain(this);
    }
    return ok;
  }

  private keep(data: Buffer | string, encoding?: BufferEncoding): boolean {
    this.queued.push(encoding ? { data, encoding } : { data });
    this.queuedBytes += data.length;
    if (this.queuedBytes >= QUEUED_HIGH_WATER) {
      this.needDrain = true;
      return false;
    }
    return true;
  }

  /** Now at the front of the line: what it kept goes out. */
  flush(): void {
    if (this.queued.length === 0) return;
    let ok = true;
    for (const p of this.queued) ok = this.conn.write(p.data, p.encoding);
    this.queued = [];
    this.queuedBytes = 0;
    if (!ok) this.conn.waitDrain(this);
    else this.drained();
  }

  /** The socket took what was written: a writer told to wait may go on. */
  drained(): void {
    if (this.needDrain && !this.destroyed) {
      this.needDrain = false;
      this.emit('drain');
    }
  }

  get ending(): boolean {
    return this.endQueued;
  }

  /** Gone out in full (or the connection closed first). */
  finished(cut: boolean): void {
    if (this.writableFinished || (this.destroyed && !cut)) return;
    if (cut) {
      this.destroyed = true;
      this.emit('close');
      return;
    }
    this.writableFinished = true;
    this.emit('finish');
    this.emit('close');
  }
}

function uncork(conn: Connection): void {
  conn.corked = false;
  conn.socket.uncork();
}

/** One tunnel's stream of requests. */
class Connection {
  readonly socket: TunnelSocket;
  private readonly env: BrokerEnv;
  private readonly limits: Limits;
  private readonly tunnel: Tunnel;
  private readonly handle: RequestHandler;
  private readonly parser: HeadParser;
  private state: 'head' | 'length' | 'chunked' | 'dead' = 'head';
  private headStarted = false;
  private headTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private body: InnerRequest | undefined;
  private bodyLeft = 0;
  private decoder: ChunkedDecoder | undefined;
  /** answers in the order asked; the first is the one going out */
  private readonly line: InnerResponse[] = [];
  private readonly open = new Set<InnerRequest>();
  private paused = false;
  private drainWaiter: InnerResponse | undefined;
  /** responses the child is still owed, in the order it asked, until each has gone out or been cut */
  private readonly owed = new Set<InnerResponse>();
  /** raw answers waiting for the owed responses to go out first */
  private readonly afterOwed: (() => void)[] = [];

  constructor(env: BrokerEnv, limits: Limits, socket: TunnelSocket, handle: RequestHandler) {
    this.env = env;
    this.limits = limits;
    this.socket = socket;
    this.tunnel = socket.tunnel;
    this.handle = handle;
    this.parser = new HeadParser({ maxHeadBytes: limits.maxHeaderBytes });
    // From the tunnel's start for its first head; a tunnel that never sends a byte is closed quietly.
    this.startHeadTimer();
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => {
      const w = this.drainWaiter;
      this.drainWaiter = undefined;
      w?.drained();
    });
    socket.on('error', () => socket.destroy());
    socket.on('end', () => this.onEnd());
    socket.once('close', () => this.onClose());
  }

  /** Writes of one tick go out together: a status line with its fields and first body bytes, a chunk with its framing. */
  corked = false;

  write(data: Buffer | string, encoding?: BufferEncoding): boolean {
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(uncork, this);
    }
    return encoding ? this.socket.write(data, encoding) : this.socket.write(data);
  }

  isFront(res: InnerResponse): boolean {
    return this.line[0] === res;
  }

  waitDrain(res: InnerResponse): void {
    this.drainWaiter = res;
  }

  pauseReading(): void {
    this.pause();
  }

  resumeReading(): void {
    if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private startHeadTimer(): void {
    clearTimeout(this.headTimer);
    this.headTimer = setTimeout(() => this.headTimeout(), this.limits.requestHeadTimeoutMs);
    this.headTimer.unref?.();
  }

  private onData(chunk: Buffer): void {
    if (this.idleTimer !== undefined) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    }
    let pos = 0;
    while (pos < chunk.length) {
      switch (this.state) {
        case 'dead':
          return;
        case 'head': {
          if (!this.headStarted) {
            this.headStarted = true;
            if (this.headTimer === undefined) this.startHeadTimer();
          }
          const part = pos === 0 ? chunk : chunk.subarray(pos);
          const r = this.parser.push(part);
          if (r.kind === 'more') return;
          if (r.kind === 'refused') {
            this.headRefused(r.reason);
            return;
          }
          clearTimeout(this.headTimer);
          this.headTimer = undefined;
          this.headStarted = false;
          pos += r.bodyOffset;
          this.parser.reset();
          this.onHead(r.head);
          break;
        }
        case 'length': {
          const take = Math.min(this.bodyLeft, chunk.length - pos);
          const req = this.body!;
          const part = pos === 0 && take === chunk.length ? chunk : chunk.subarray(pos, pos + take);
          const relay = req.relayData;
          // the relay pauses the reader itself when the vendor's socket is full
          let ok = true;
          if (relay !== undefined) relay(part);
          else ok = req.push(part);
          pos += take;
          this.bodyLeft -= take;
          if (this.bodyLeft === 0) this.bodyDone();
          else if (!ok) this.pause();
          break;
        }
        case 'chunked': {
          const r = this.decoder!.push(chunk, pos);
          if (r.kind === 'more') {
            if (this.body && this.body.readableLength >= this.body.readableHighWaterMark) this.pause();
            return;
          }
          if (r.kind === 'refused') {
            this.bodyRefused(r.reason);
            return;
          }
          pos = r.end;
          this.bodyDone();
          break;
        }
      }
    }
  }

  private pause(): void {
    if (!this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  private onHead(head: ParsedHead): void {
    const tunnel = this.tunnel;
    tunnel.requests++;
    if (head.upgrade) {
      this.state = 'dead';
      const err = brokerError('CLI_UPGRADE_REFUSED', { upgrade: headerValue(head, 'upgrade').slice(0, 64) });
      this.whenOwedPaid(() =>
        auditRefusal(
          this.env,
          tunnel.session,
          tunnel.host,
          head.method,
          head.target,
          err,
          writeRawRefusal(this.socket, err, {}, this.limits.requestHeadTimeoutMs),
        ),
      );
      return;
    }
    const req = new InnerRequest(this, head);
    const res = new InnerResponse(this, req, head);
    this.line.push(res);
    this.open.add(req);
    this.owe(res);
    const framing = head.framing;
    if (framing.kind === 'none' || (framing.kind === 'length' && framing.bytes === 0)) {
      this.complete(req);
      this.state = head.connectionClose ? 'dead' : 'head';
    } else if (framing.kind === 'length') {
      this.body = req;
      this.bodyLeft = framing.bytes;
      this.state = 'length';
    } else {
      this.body = req;
      this.decoder = new ChunkedDecoder({
        onData: (buf, start, end) => {
          const part = start === 0 && end === buf.length ? buf : buf.subarray(start, end);
          const relay = req.relayData;
          if (relay !== undefined) relay(part);
          else req.push(part);
        },
      });
      this.state = 'chunked';
    }
    if (head.connectionClose && this.state === 'head') this.state = 'dead';
    // The pipeline answers and audits every failure itself; should anything still escape it,
    // the one request is cut and logged, never an unhandled rejection ending the process.
    this.handle(req, res)?.catch((err: unknown) => {
      this.env.log?.error({ err }, 'clibroker: unexpected failure in the request pipeline');
      res.destroy();
    });
    // Answered at once with a refusal that ends the connection (the budget is spent): the
    // requests pipelined behind it are never read.
    if (res.closeAfter && this.state === 'head') this.state = 'dead';
  }

  private complete(req: InnerRequest): void {
    req.complete = true;
    this.open.delete(req);
    const relayed = req.relayComplete();
    req.push(null);
    // relayed, nothing reads the stream: it flows to its end as it did under a reader
    if (relayed) req.resume();
  }

  private bodyDone(): void {
    const req = this.body!;
    this.body = undefined;
    this.decoder = undefined;
    this.complete(req);
    this.resumeReading();
    const res = this.line[this.line.length - 1];
    this.state = res?.closeAfter && res.req === req ? 'dead' : 'head';
  }

  /** A head the parser refused, or one that did not arrive in time: a request of its own, answered once. */
  private headRefused(reason: HeadRefusal): void {
    const { method, target } = this.parser.partial;
    this.refuseHead(headRefusal(reason, this.tunnel.host), method || '-', target || '-');
  }

  private headTimeout(): void {
    this.headTimer = undefined;
    if (this.state !== 'head') return;
    // A fresh tunnel that never sent a byte is an idle one (gh opens a spare): closed quietly.
    if (this.socket.bytesRead === 0 || !this.headStarted) {
      if (this.line.length === 0) this.socket.destroy();
      return;
    }
    this.refuseHead(new BrokerError('CLI_REQUEST_HEAD_TIMEOUT'), '-', '-');
  }

  private refuseHead(refusal: BrokerError, method: string, target: string): void {
    clearTimeout(this.headTimer);
    this.headTimer = undefined;
    this.state = 'dead';
    const tunnel = this.tunnel;
    this.whenOwedPaid(() =>
      auditRefusal(
        this.env,
        tunnel.session,
        tunnel.host,
        method,
        target,
        refusal,
        writeRawRefusal(this.socket, refusal, {}, this.limits.requestHeadTimeoutMs),
      ),
    );
  }

  /** A bad body belongs to the request being read: its one event records the refusal. */
  private bodyRefused(reason: ChunkedRefusal): void {
    this.state = 'dead';
    const refusal = brokerError('CLI_BAD_REQUEST', { parseError: reason });
    const req = this.body!;
    this.body = undefined;
    this.decoder = undefined;
    // The request is still its handler's: it records the refusal and answers it.
    const taken = req.onBodyRefused?.(refusal);
    if (taken === 'cut') {
      // The vendor is already answering it: no clean answer is possible.
      this.socket.destroy();
      return;
    }
    // The phase still reading the body stops now.
    req.destroy();
    if (taken === 'answered') return;
    const tunnel = this.tunnel;
    this.whenOwedPaid(() =>
      auditRefusal(
        this.env,
        tunnel.session,
        tunnel.host,
        '-',
        '-',
        refusal,
        writeRawRefusal(this.socket, refusal, {}, this.limits.requestHeadTimeoutMs),
      ),
    );
  }

  /** Counts a response as owed to the child until it has gone out in full, or was cut. */
  private owe(res: InnerResponse): void {
    this.owed.add(res);
    const paid = (): void => {
      if (this.owed.delete(res) && this.owed.size === 0) this.settleOwed();
    };
    res.once('finish', paid);
    res.once('close', paid);
  }

  /**
   * Runs `answer` once every response owed before it has gone out. Bytes written raw onto the
   * socket while an earlier pipelined request still awaits its answer would be read by the
   * child as that request's answer (a refused bad head taken for the refusal of a POST the
   * vendor is carrying out). A socket that closes first runs it at once, unable to answer.
   */
  private whenOwedPaid(answer: () => void): void {
    if (this.owed.size === 0) answer();
    else this.afterOwed.push(answer);
  }

  private settleOwed(): void {
    for (const answer of this.afterOwed.splice(0)) answer();
  }

  /** An answer was ended: if it is at the front, it goes out now and the next one follows. */
  ended(res: InnerResponse): void {
    if (this.line[0] !== res) return;
    this.advance();
  }

  private advance(): void {
    while (this.line.length > 0) {
      const front = this.line[0]!;
      front.flush();
      if (!front.ending) return;
      this.line.shift();
      if (!front.req.complete) front.req.resume(); // the rest of its body is read and dropped
      const closeAfter = front.closeAfter;
      front.finished(false);
      if (closeAfter) {
        this.state = 'dead';
        for (const r of this.line.splice(0)) r.finished(true);
        endWithin(this.socket, this.limits.requestHeadTimeoutMs);
        return;
      }
    }
    // Nothing owed, nothing being read: an idle keep-alive connection, closed quietly in time.
    if (this.state === 'head' && !this.headStarted && this.idleTimer === undefined) {
      this.idleTimer = setTimeout(() => {
        this.idleTimer = undefined;
        if (this.line.length === 0 && !this.headStarted) this.socket.destroy();
      }, KEEP_ALIVE_IDLE_MS);
      this.idleTimer.unref?.();
    }
  }

  private onEnd(): void {
    // The child will send nothing more: as node's server does, whatever is still being read is
    // cut and the connection ends; answers not yet out are cut when it closes.
    // The answers first: a body stream cut now must find its request already the child's doing.
    this.state = 'dead';
    clearTimeout(this.headTimer);
    for (const r of this.line.splice(0)) r.finished(true);
    for (const req of this.open) if (!req.complete) req.destroy(new Error('aborted'));
    this.open.clear();
    this.body = undefined;
    this.socket.end();
  }

  private onClose(): void {
    // What waited for the owed answers is answered into a closed socket: it records that
    // nothing went out.
    this.owed.clear();
    this.settleOwed();
    this.state = 'dead';
    clearTimeout(this.headTimer);
    clearTimeout(this.idleTimer);
    for (const req of this.open) if (!req.complete) req.destroy(new Error('aborted'));
    this.open.clear();
    for (const r of this.line.splice(0)) r.finished(true);
  }
}

function headerValue(head: ParsedHead, lower: string): string {
  const h = head.headers;
  for (let i = 0; i < h.length; i += 2) if (h[i]!.toLowerCase() === lower) return h[i + 1]!;
  return '';
}

/** The coded refusal for a head the parser refused, as the broker has always answered such heads. */
export function headRefusal(reason: HeadRefusal, host: string): BrokerError {
  switch (reason) {
    case 'head-too-large':
    case 'too-many-headers':
      return brokerError('CLI_HEADERS_TOO_LARGE', { parseError: reason });
    case 'connect-method':
      return new BrokerError('CLI_TUNNEL_CONNECT_REFUSED');
    case 'missing-host':
    case 'bad-host':
      return brokerError('CLI_HOST_MISMATCH', { what: 'Host', got: '', host });
    default:
      return brokerError('CLI_BAD_REQUEST', { parseError: reason });
  }
}

/** Serves the requests of one tunnel's decrypted socket, handing each to `handle`. */
export function serveTunnel(
  env: BrokerEnv,
  limits: Limits,
  socket: TunnelSocket,
  handle: RequestHandler,
): void {
  new Connection(env, limits, socket, handle);
}
