/**
 * The broker's upstream client: HTTP/1.1 over TLS, one keep-alive pool per vendor host,
 * shared by every session. Credentials are stamped per request, never per connection, so
 * sharing a connection between sessions is safe — as long as both ends agree where each
 * response ends. So responses are read by the strict response parser (response-head.ts) and
 * the strict chunked decoder, and a connection is reused only when its last response ended
 * exactly where its framing said, with nothing after it: any doubt closes the connection and
 * fails that request, never the next one.
 *
 * Why not a general client: the broker needs one request at a time per connection, bodies
 * relayed as they come with backpressure both ways, and a connect that checks every address
 * it dials. A general dispatcher pays, per request and at start-up, for everything else it
 * does; docs/architecture.md has the figures.
 *
 * Routing (where a host's connection goes, and the address rule on every address of the
 * answer) is shared with the undici-based dispatcher the broker exposes to its host
 * (upstream.ts): the address checked is the address connected to, handed to the socket as
 * its lookup, with no second lookup in between.
 */
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext, connect as tlsConnect, type TLSSocket } from 'node:tls';
import { BrokerError } from '../errors.js';
import { ChunkedDecoder } from './http1/chunked.js';
import { clientCertRefusal } from './client-cert.js';
import { type ResponseHead, ResponseHeadParser, responseFraming } from './http1/response-head.js';
import type { BrokerOptions } from './types.js';
import { CONNECT_TIMEOUT_CODE, createRoute, type Route } from './upstream.js';

/** One request for a vendor. */
export interface UpstreamRequest {
  /** the vendor host (the tunnel's CONNECT host): pool key, SNI, certificate name and Host */
  readonly host: string;
  readonly method: string;
  /** origin-form target */
  readonly path: string;
  /**
   * flat [name, value, …] in order; no Host and no hop-by-hop or framing field but
   * Content-Length (the writer adds Host, and Content-Length or chunked framing)
   */
  readonly headers: readonly string[];
  /** a whole body, a stream of it (sent as it comes), or none */
  readonly body: Buffer | BodySource | AsyncIterable<Buffer> | null;
  /** how long the exchange may take from now, connect included; past it, it fails with a timeout */
  readonly timeoutMs: number;
}

/**
 * A body the client is handed chunk by chunk, the way a node stream in flowing mode gives
 * it: no promise and no copy per chunk, which is what an async iterable costs.
 */
export interface BodySource {
  /** Starts the flow: `sink.data` for each chunk in order, then `sink.end()`; or `sink.error()` at any point. */
  start(sink: BodySink): void;
  /** The vendor's socket holds enough: no `sink.data` until `resume`. */
  pause(): void;
  resume(): void;
  /** The exchange is over: the sink hears nothing more (what is left of the body is the caller's). */
  stop(): void;
}

/** Where a {@link BodySource} sends its body. */
export interface BodySink {
  data(chunk: Buffer): void;
  end(): void;
  error(err: Error): void;
}

/** What the caller can do to an exchange while it runs. */
export interface UpstreamController {
  /** Ends the exchange now (its connection is closed unless it was still waiting for one); no handler call follows. */
  abort(): void;
  /** Stops reading the response until `resume`. */
  pause(): void;
  resume(): void;
}

/** Told what became of an exchange: `onStart`, then `onHead`, `onData`… and `onEnd`; or `onError` at any point. */
export interface UpstreamHandler {
  /** the request is about to be written to a connection (before this, nothing was sent) */
  onStart(): void;
  /** the final response head (interim 1xx heads are skipped) */
  onHead(status: number, reason: string, headers: readonly string[]): void;
  /** a run of response body, decoded from its framing; valid only during the call unless kept */
  onData(chunk: Buffer): void;
  onEnd(): void;
  /**
   * the exchange failed; an error with `code` from {@link UPSTREAM_ERRORS}, a socket's own code,
   * or a BrokerError: from routing, or CLI_CLIENT_CERT_UNSUPPORTED (client-cert.ts)
   */
  onError(err: Error): void;
}

/** The codes of the failures the client itself reports (socket and TLS errors keep their own). */
export const UPSTREAM_ERRORS = {
  /** a connect, or the name lookup before it, took longer than 10 s */
  connectTimeout: CONNECT_TIMEOUT_CODE,
  headersTimeout: 'ERR_UPSTREAM_HEADERS_TIMEOUT',
  bodyTimeout: 'ERR_UPSTREAM_BODY_TIMEOUT',
  /** the vendor closed the connection before the response was complete */
  closed: 'ERR_UPSTREAM_CLOSED',
  /** the response head or chunked framing was refused (the reason is in the message) */
  badResponse: 'ERR_UPSTREAM_BAD_RESPONSE',
  /** the vendor chose another protocol (ALPN), or switched protocols (101) */
  protocol: 'ERR_UPSTREAM_PROTOCOL',
  /** a request header the writer will not send (a name or value that could end its line early) */
  badRequestHeader: 'ERR_UPSTREAM_BAD_REQUEST_HEADER',
  /** the body's length differs from its Content-Length */
  bodyLength: 'ERR_UPSTREAM_BODY_LENGTH',
  /** the client was destroyed */
  destroyed: 'ERR_UPSTREAM_DESTROYED',
} as const;

/** The timeout codes among {@link UPSTREAM_ERRORS}. */
export const UPSTREAM_TIMEOUT_CODES: ReadonlySet<string> = new Set([
  UPSTREAM_ERRORS.connectTimeout,
  UPSTREAM_ERRORS.headersTimeout,
  UPSTREAM_ERRORS.bodyTimeout,
]);

function failure(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** As undici's defaults. */
const CONNECT_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_MS = 30_000;
const KEEP_ALIVE_MAX_MS = 120_000;
/** A vendor's keep-alive hint is cut by this much: its timer and ours do not start together. */
const KEEP_ALIVE_MARGIN_MS = 1_000;
const TLS_SESSIONS = 100;
/** A whole body up to this size goes out in the head's write (one TLS record, one syscall). */
const COALESCE_BYTES = 16 * 1024;
/**
 * Bytes of a streamed body the vendor's socket may hold before the child is read no further.
 * The chunks read in one tick go out as one write (one encryption call, one syscall), so the
 * queue may hold several 16 KiB records at once; pausing at the socket's own 16 KiB mark
 * would stop the child at every chunk.
 */
const UPLOAD_WINDOW = 256 * 1024;

const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Bytes node's own writer refuses in a field value: controls but HTAB, and DEL. */
const BAD_VALUE_RE = /[^\t\x20-\x7e\x80-\xff]/;
const PAYLOAD_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The broker's upstream client. */
export class UpstreamPool {
  private readonly origins = new Map<string, Origin>();
  private readonly route: Route;
  private readonly ca: string[] | undefined;
  readonly maxConnections: number;
  private readonly sessions = new Map<string, Buffer>();
  private context: SecureContext | undefined;
  private destroyed = false;
  /** connects under way, each with the way to end it */
  private readonly dialing = new Set<(err: Error) => void>();

  /**
   * @throws TypeError as {@link createRoute}
   */
  constructor(opts: BrokerOptions['upstream'] = {}) {
    this.route = createRoute(opts);
    this.ca = opts.ca === undefined ? undefined : typeof opts.ca === 'string' ? [opts.ca] : [...opts.ca];
    this.maxConnections = opts.connections ?? 32;
  }

  /** Sends one request; the handler hears the rest. */
  request(req: UpstreamRequest, handler: UpstreamHandler): UpstreamController {
    const x = new Exchange(req, handler);
    if (this.destroyed) {
      x.fail(failure(UPSTREAM_ERRORS.destroyed, 'the upstream client was closed'));
      return x;
    }
    let origin = this.origins.get(req.host);
    if (!origin) {
      origin = new Origin(this, req.host);
      this.origins.set(req.host, origin);
    }
    x.start(origin);
    return x;
  }

  /** Open connections per host (tests and metrics): idle and busy. */
  connections(): Record<string, { idle: number; busy: number; connecting: number; queued: number }> {
    const out: Record<string, { idle: number; busy: number; connecting: number; queued: number }> = {};
    for (const [host, o] of this.origins)
      out[host] = {
        idle: o.idle.length,
        busy: o.open - o.idle.length,
        connecting: o.connecting,
        queued: o.queue.length,
      };
    return out;
  }

  /** Closes every connection; exchanges still running or waiting fail. */
  async destroy(): Promise<void> {
    this.destroyed = true;
    const err = failure(UPSTREAM_ERRORS.destroyed, 'the upstream client was closed');
    const closing: Promise<void>[] = [];
    // a connect under way fails its exchange and never becomes a connection
    for (const end of [...this.dialing]) end(err);
    for (const o of this.origins.values()) {
      for (const x of o.queue.splice(0)) x.fail(err);
      for (const c of [...o.conns]) {
        closing.push(new Promise((resolve) => c.socket.once('close', () => resolve())));
        c.destroy(err);
      }
    }
    this.origins.clear();
    await Promise.all(closing);
  }

  /** @internal */
  isDestroyed(): boolean {
    return this.destroyed;
  }

  /** One TLS context for every connection: building one per connect parsed the CA each time. */
  private secureContext(): SecureContext {
    this.context ??= createSecureContext(this.ca ? { ca: this.ca } : {});
    return this.context;
  }

  /** @internal Opens a TLS connection to `host` for `origin`, routed and checked. */
  dial(origin: Origin, x: Exchange): void {
    origin.connecting++;
    const host = origin.host;
    let done = false;
    let socket: TLSSocket | undefined;
    const fail = (err: Error): void => {
      if (done) return;
      done = true;
      this.dialing.delete(fail);
      clearTimeout(timer);
      origin.connecting--;
      socket?.destroy();
      x.fail(err);
      origin.pump();
    };
    const timer = setTimeout(
      () =>
        fail(
          failure(
            UPSTREAM_ERRORS.connectTimeout,
            `connecting to ${host} took longer than ${CONNECT_TIMEOUT_MS} ms`,
          ),
        ),
      CONNECT_TIMEOUT_MS,
    );
    timer.unref();
    this.dialing.add(fail);
    this.route(host).then(
      ({ name, addresses, port }) => {
        if (done) return;
        if (this.destroyed) return fail(failure(UPSTREAM_ERRORS.destroyed, 'the upstream client was closed'));
        // The checked answer, exactly: node's connection racing (happy eyeballs) picks among
        // these addresses and no others.
        const lookup: LookupFunction = (_h, options, callback) => {
          if (options.all) return callback(null, addresses);
          callback(null, addresses[0]!.address, addresses[0]!.family);
        };
        const session = this.sessions.get(host);
        const s = tlsConnect({
          host: name,
          port: port === undefined ? 443 : Number(port),
          // servername stays the real host: the vendor's certificate is checked against it
          ...(isIP(host) ? {} : { servername: host }),
          secureContext: this.secureContext(),
          rejectUnauthorized: true,
          ALPNProtocols: ['http/1.1'],
          ...(isIP(name) ? {} : { lookup, autoSelectFamily: true }),
          ...(session ? { session } : {}),
        });
        socket = s;
        // interactive CLI traffic: small requests, latency matters more than batching
        s.setNoDelay(true);
        s.on('session', (buf: Buffer) => this.keepSession(host, buf));
        const onClose = (): void =>
          fail(failure(UPSTREAM_ERRORS.closed, `${host} closed the connection during the handshake`));
        // A vendor that refuses the handshake for want of a client certificate (TLS 1.2) is
        // told apart here, while the socket still knows whether it asked for one.
        s.once('error', (err: Error) => fail(clientCertRefusal(err, s, host) ?? err));
        s.once('close', onClose);
        s.once('secureConnect', () => {
          if (done) return;
          if (s.alpnProtocol && s.alpnProtocol !== 'http/1.1')
            return fail(failure(UPSTREAM_ERRORS.protocol, `${host} chose ${s.alpnProtocol} over http/1.1`));
          done = true;
          this.dialing.delete(fail);
          clearTimeout(timer);
          s.off('error', fail);
          s.off('close', onClose);
          origin.connecting--;
          s.setKeepAlive(true, 60_000);
          const conn = new Connection(origin, s);
          origin.opened(conn, x);
        });
      },
      (err: Error) => fail(err),
    );
  }

  private keepSession(host: string, session: Buffer): void {
    this.sessions.delete(host);
    if (this.sessions.size >= TLS_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(host, session);
  }
}

/** One vendor host's connections and the requests waiting for one. */
class Origin {
  readonly pool: UpstreamPool;
  readonly host: string;
  readonly conns = new Set<Connection>();
  /** idle connections, the most recently used last */
  readonly idle: Connection[] = [];
  readonly queue: Exchange[] = [];
  connecting = 0;

  constructor(pool: UpstreamPool, host: string) {
    this.pool = pool;
    this.host = host;
  }

  get open(): number {
    return this.conns.size;
  }

  /** An idle connection, a new one, or a place in the line. */
  acquire(x: Exchange): void {
    for (;;) {
      const c = this.idle.pop();
      if (!c) break;
      if (c.usable()) {
        c.send(x);
        return;
      }
    }
    if (this.conns.size + this.connecting < this.pool.maxConnections) this.pool.dial(this, x);
    else this.queue.push(x);
  }

  /** A connection came up for `x`; should `x` be gone, it serves the line or waits idle. */
  opened(c: Connection, x: Exchange): void {
    this.conns.add(c);
    if (!x.done) {
      c.send(x);
      return;
    }
    this.release(c);
  }

  /** A connection is free again. */
  release(c: Connection): void {
    const next = this.queue.shift();
    if (next) {
      c.send(next);
      return;
    }
    c.idleFor();
    this.idle.push(c);
  }

  /** A connection closed. */
  closed(c: Connection): void {
    this.conns.delete(c);
    const i = this.idle.indexOf(c);
    if (i !== -1) this.idle.splice(i, 1);
    this.pump();
  }

  /** Room for another connection: the line's first request gets one. */
  pump(): void {
    if (this.pool.isDestroyed()) return;
    if (this.queue.length > 0 && this.conns.size + this.connecting < this.pool.maxConnections)
      this.pool.dial(this, this.queue.shift()!);
  }

  /** `x` gave up while waiting in line. */
  leave(x: Exchange): void {
    const i = this.queue.indexOf(x);
    if (i !== -1) this.queue.splice(i, 1);
  }
}

/** One request's life in the client. */
class Exchange implements UpstreamController {
  readonly req: UpstreamRequest;
  readonly handler: UpstreamHandler;
  origin: Origin | undefined;
  conn: Connection | undefined;
  done = false;
  /** the whole request went out */
  written = false;
  /** the final response head arrived */
  answered = false;
  paused = false;
  /** sent a second time, on a new connection (see {@link Exchange.retryable}) */
  retried = false;
  /** the body being uploaded, stopped when the exchange ends */
  source: BodySource | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(req: UpstreamRequest, handler: UpstreamHandler) {
    this.req = req;
    this.handler = handler;
  }

  start(origin: Origin): void {
    this.origin = origin;
    this.timer = setTimeout(() => this.timedOut(), timerMs(this.req.timeoutMs));
    this.timer.unref();
    origin.acquire(this);
  }

  /**
   * May go again on a new connection when a kept-alive one closed under it before any byte of
   * an answer: once, and only a request that is safe to repeat (GET, HEAD, OPTIONS) with no
   * body. A vendor closes an idle connection when it likes; that close can cross a request
   * on the wire, and the request then never reached the vendor's application.
   */
  retryable(): boolean {
    return !this.retried && !this.done && this.req.body === null && SAFE_METHODS.has(this.req.method);
  }

  private timedOut(): void {
    if (this.done) return;
    const ms = this.req.timeoutMs;
    const err = this.answered
      ? failure(
          UPSTREAM_ERRORS.bodyTimeout,
          `the response body from ${this.req.host} did not end within ${ms} ms`,
        )
      : failure(UPSTREAM_ERRORS.headersTimeout, `no response from ${this.req.host} within ${ms} ms`);
    const c = this.conn;
    this.fail(err);
    c?.destroy(err);
  }

  /** Ends the exchange with `err` (at most once), and frees what it held but its connection. */
  fail(err: Error): void {
    if (this.done) return;
    this.finish();
    this.handler.onError(err);
  }

  /** Ends the exchange without telling the handler. */
  finish(): void {
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.source) {
      this.source.stop();
      this.source = undefined;
    }
    if (!this.conn) this.origin?.leave(this);
  }

  abort(): void {
    if (this.done) return;
    this.finish();
    this.conn?.destroy(failure(UPSTREAM_ERRORS.closed, 'the request was cut off'));
  }

  pause(): void {
    if (this.done || this.paused) return;
    this.paused = true;
    this.conn?.socket.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (!this.done) this.conn?.socket.resume();
  }
}

/** One TLS connection to a vendor, one exchange at a time. */
class Connection {
  readonly socket: TLSSocket;
  private readonly origin: Origin;
  private readonly parser = new ResponseHeadParser();
  private x: Exchange | undefined;
  private state: 'idle' | 'head' | 'length' | 'chunked' | 'close' | 'dead' = 'idle';
  private left = 0;
  private decoder: ChunkedDecoder | undefined;
  /** the current response allows the connection to be reused */
  private keep = true;
  private idleMs = KEEP_ALIVE_MS;
  private idleTimer: NodeJS.Timeout | undefined;
  /** exchanges this connection completed */
  private served = 0;
  /** bytes read since the current exchange was sent */
  private heard = 0;
  private readonly deliver = (buf: Buffer, start: number, end: number): void => {
    this.x?.handler.onData(buf.subarray(start, end));
  };

  constructor(origin: Origin, socket: TLSSocket) {
    this.origin = origin;
    this.socket = socket;
    socket.on('data', (buf: Buffer) => this.read(buf));
    socket.on('end', () => this.ended());
    // TLS 1.3: the client's side of the handshake is done before the vendor checks for a
    // certificate, so its refusal arrives here, after the request was written.
    socket.on('error', (err: Error) => this.destroy(clientCertRefusal(err, socket, origin.host) ?? err));
    socket.on('close', () => {
      const err = failure(UPSTREAM_ERRORS.closed, `${origin.host} closed the connection`);
      this.dead(err);
    });
  }

  /** Still open and quiet: fit to carry another request. */
  usable(): boolean {
    return this.state === 'idle' && !this.socket.destroyed && this.socket.writable;
  }

  /** Waits idle, closed after the keep-alive time. */
  idleFor(): void {
    this.state = 'idle';
    this.socket.unref();
    this.idleTimer = setTimeout(() => this.destroy(), this.idleMs);
    this.idleTimer.unref();
  }

  /** Writes `x`'s request. */
  send(x: Exchange): void {
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    }
    this.socket.ref();
    this.x = x;
    x.conn = this;
    this.state = 'head';
    this.keep = true;
    this.heard = 0;
    this.parser.reset();
    const req = x.req;
    const body = req.body;
    let head: string;
    let declared: number;
    try {
      [head, declared] = requestHead(req, body);
    } catch (err) {
      this.x = undefined;
      x.conn = undefined;
      this.state = 'idle';
      x.fail(err as Error);
      this.origin.release(this);
      return;
    }
    x.handler.onStart();
    if (x.done) return; // aborted from onStart
    if (x.paused) this.socket.pause();
    if (body === null) {
      this.socket.write(head, 'latin1');
      x.written = true;
    } else if (Buffer.isBuffer(body)) {
      if (body.length <= COALESCE_BYTES) {
        const out = Buffer.allocUnsafe(head.length + body.length);
        out.write(head, 0, 'latin1');
        body.copy(out, head.length);
        this.socket.write(out);
      } else {
        this.socket.cork();
        this.socket.write(head, 'latin1');
        this.socket.write(body);
        this.socket.uncork();
      }
      x.written = true;
    } else {
      this.socket.write(head, 'latin1');
      this.upload(x, isSource(body) ? body : iterableSource(body), declared);
    }
  }

  /** Streams a body up as it comes, chunked when no length was declared, with backpressure. */
  private upload(x: Exchange, source: BodySource, declared: number): void {
    const socket = this.socket;
    const chunked = declared < 0;
    let sent = 0;
    let waiting = false;
    let corked = false;
    const live = (): boolean => !x.done && x.conn === this && this.state !== 'dead';
    const onDrain = (): void => {
      waiting = false;
      if (live()) source.resume();
    };
    const uncork = (): void => {
      corked = false;
      socket.uncork();
    };
    x.source = source;
    source.start({
      data: (chunk) => {
        if (!live()) {
          source.stop();
          return;
        }
        if (chunk.length === 0) return;
        sent += chunk.length;
        if (!corked) {
          // the chunks of this tick (the child's socket hands over several records per read) go out together
          corked = true;
          socket.cork();
          process.nextTick(uncork);
        }
        let ok: boolean;
        if (chunked) {
          socket.cork();
          socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
          socket.write(chunk);
          ok = socket.write('\r\n', 'latin1');
          socket.uncork();
        } else if (sent > declared) {
          this.lengthDiffers(x, sent, declared);
          return;
        } else ok = socket.write(chunk);
        if (!ok && !waiting && socket.writableLength >= UPLOAD_WINDOW) {
          // The socket's queue is past its high-water mark: the child is read no further until
          // it drains, so one upload holds one queue's worth, not what the child can send.
          waiting = true;
          source.pause();
          socket.once('drain', onDrain);
        }
      },
      end: () => {
        if (!live()) return;
        x.source = undefined;
        if (!chunked && sent !== declared) {
          this.lengthDiffers(x, sent, declared);
          return;
        }
        if (chunked) socket.write('0\r\n\r\n', 'latin1');
        x.written = true;
      },
      error: (err) => {
        // the body's source failed (over the cap, the child gone, its framing broken)
        if (x.conn !== this) return;
        x.fail(err);
        this.destroy(err);
      },
    });
  }

  private lengthDiffers(x: Exchange, sent: number, declared: number): void {
    const err = failure(
      UPSTREAM_ERRORS.bodyLength,
      `the body sent was ${sent > declared ? 'longer' : 'shorter'} than its Content-Length of ${declared}`,
    );
    x.fail(err);
    this.destroy(err);
  }

  private read(buf: Buffer): void {
    this.heard += buf.length;
    let pos = 0;
    while (pos < buf.length) {
      const x = this.x;
      if (!x || x.done || this.state === 'idle') {
        // bytes nobody asked for: the connection can no longer be trusted
        this.destroy(
          failure(UPSTREAM_ERRORS.badResponse, `${this.origin.host} sent bytes outside any response`),
        );
        return;
      }
      switch (this.state) {
        case 'head': {
          const r = this.parser.push(buf, pos);
          if (r.kind === 'more') return;
          if (r.kind === 'refused') {
            this.bad(x, `the response head was refused (${r.reason})`);
            return;
          }
          pos = r.bodyOffset;
          const h = r.head;
          if (h.status < 200) {
            if (h.status === 101) {
              this.refuse(x, failure(UPSTREAM_ERRORS.protocol, `${this.origin.host} switched protocols`));
              return;
            }
            this.parser.reset();
            break;
          }
          this.began(x, h);
          if (this.over(x)) return;
          if (this.idle()) {
            this.endOfResponse(x, pos < buf.length);
            return;
          }
          break;
        }
        case 'length': {
          const take = Math.min(this.left, buf.length - pos);
          this.left -= take;
          x.handler.onData(take === buf.length ? buf : buf.subarray(pos, pos + take));
          pos += take;
          if (this.over(x)) return;
          if (this.left === 0) {
            this.state = 'idle';
            this.endOfResponse(x, pos < buf.length);
            return;
          }
          break;
        }
        case 'chunked': {
          const r = this.decoder!.push(buf, pos);
          if (this.over(x)) return;
          if (r.kind === 'more') return;
          if (r.kind === 'refused') {
            this.bad(x, `the response's chunked body was refused (${r.reason})`);
            return;
          }
          pos = r.end;
          this.state = 'idle';
          this.endOfResponse(x, pos < buf.length);
          return;
        }
        case 'close':
          x.handler.onData(pos === 0 ? buf : buf.subarray(pos));
          return;
      }
    }
  }

  /** `x` ended, or the connection did (a handler call can do either). */
  private over(x: Exchange): boolean {
    return x.done || this.state === 'dead';
  }

  /** The response is complete (a call, so that a state `began` changed is read anew). */
  private idle(): boolean {
    return this.state === 'idle';
  }

  /** The final head arrived: the handler hears it, and the body's framing is set. */
  private began(x: Exchange, h: ResponseHead): void {
    x.answered = true;
    if (h.connectionClose) this.keep = false;
    if (h.keepAliveTimeoutMs !== undefined)
      this.idleMs = Math.max(
        KEEP_ALIVE_MARGIN_MS,
        Math.min(KEEP_ALIVE_MAX_MS, h.keepAliveTimeoutMs - KEEP_ALIVE_MARGIN_MS),
      );
    const framing = responseFraming(h, x.req.method);
    x.handler.onHead(h.status, h.reason, h.headers);
    if (this.over(x)) return;
    switch (framing.kind) {
      case 'none':
        this.state = 'idle';
        return;
      case 'length':
        this.left = framing.bytes;
        this.state = framing.bytes === 0 ? 'idle' : 'length';
        return;
      case 'chunked':
        this.decoder = new ChunkedDecoder({ onData: this.deliver });
        this.state = 'chunked';
        return;
      case 'close':
        this.keep = false;
        this.state = 'close';
    }
  }

  /** The response ended where its framing said; `extra`: more bytes followed it. */
  private endOfResponse(x: Exchange, extra: boolean): void {
    if (extra) this.keep = false;
    if (!x.written) {
      // answered before the body was all sent (a refusal, say): the exchange is over, and the
      // connection, with part of a body unsent, can carry nothing else
      x.finish();
      x.handler.onEnd();
      this.destroy();
      return;
    }
    this.done(x);
  }

  /** The exchange is over and the connection is in step: it goes back, or closes. */
  private done(x: Exchange): void {
    this.served++;
    this.x = undefined;
    x.conn = undefined;
    this.decoder = undefined;
    const wasDone = x.done;
    x.finish();
    if (x.paused) this.socket.resume();
    if (this.keep && !this.origin.pool.isDestroyed()) this.origin.release(this);
    else this.destroy();
    if (!wasDone) x.handler.onEnd();
  }

  private ended(): void {
    const x = this.x;
    if (x && this.state === 'close' && !x.done) {
      this.state = 'idle';
      x.finish();
      x.handler.onEnd();
    }
    this.destroy();
  }

  private bad(x: Exchange, why: string): void {
    this.refuse(x, failure(UPSTREAM_ERRORS.badResponse, `${this.origin.host}: ${why}`));
  }

  private refuse(x: Exchange, err: Error): void {
    x.fail(err);
    this.destroy(err);
  }

  /** Closes the connection; an exchange still on it fails with `err`. */
  destroy(err?: Error): void {
    if (this.state === 'dead') return;
    this.socket.destroy();
    this.dead(err ?? failure(UPSTREAM_ERRORS.closed, `the connection to ${this.origin.host} was closed`));
  }

  private dead(err: Error): void {
    if (this.state === 'dead') return;
    this.state = 'dead';
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const x = this.x;
    this.x = undefined;
    this.origin.closed(this);
    if (!x || x.done) return;
    x.conn = undefined;
    // A refusal (a vendor that wants a client certificate) is final: it would only repeat.
    if (this.served > 0 && this.heard === 0 && !(err instanceof BrokerError) && x.retryable()) {
      x.retried = true;
      this.origin.acquire(x);
      return;
    }
    x.fail(err);
  }
}

/**
 * A timeout past 2 s is rounded up to the next whole second. node keeps one list of timers
 * per duration: every request's own remaining time made a new list, and a priority-queue
 * insert, per request (~2 % of the proxy's CPU in S2 profiles); rounded, concurrent requests
 * share a handful of lists. The pipeline's timeouts sit past the session's deadline anyway.
 */
function timerMs(ms: number): number {
  return ms > 2000 ? Math.ceil(ms / 1000) * 1000 : Math.max(1, ms);
}

function isSource(body: BodySource | AsyncIterable<Buffer>): body is BodySource {
  return typeof (body as BodySource).start === 'function';
}

/** An async iterable as a {@link BodySource}: read one chunk at a time, waiting while paused. */
export function iterableSource(body: AsyncIterable<Buffer>): BodySource {
  let paused = false;
  let stopped = false;
  let wake: (() => void) | undefined;
  const wakeUp = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  return {
    start(sink) {
      void (async () => {
        try {
          for await (const chunk of body) {
            if (stopped) return;
            sink.data(chunk);
            while (paused && !stopped) await new Promise<void>((resolve) => (wake = resolve));
            if (stopped) return;
          }
          if (!stopped) sink.end();
        } catch (err) {
          if (!stopped) sink.error(err as Error);
        }
      })();
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      wakeUp();
    },
    stop() {
      stopped = true;
      wakeUp();
    },
  };
}

/**
 * The request line and fields, Host first, then the caller's fields in order, then the
 * framing the body needs; and the Content-Length declared among them (-1 when none).
 * @throws Error ERR_UPSTREAM_BAD_REQUEST_HEADER, ERR_UPSTREAM_BODY_LENGTH
 */
function requestHead(req: UpstreamRequest, body: UpstreamRequest['body']): [head: string, declared: number] {
  let text = `${req.method} ${req.path} HTTP/1.1\r\nhost: ${req.host}\r\n`;
  const h = req.headers;
  let length = -1;
  for (let i = 0; i < h.length; i += 2) {
    const field = h[i]!;
    const value = h[i + 1]!;
    if (!TOKEN_RE.test(field) || BAD_VALUE_RE.test(value))
      throw failure(
        UPSTREAM_ERRORS.badRequestHeader,
        `the request field ${TOKEN_RE.test(field) ? field.slice(0, 64) : '(a bad name)'} cannot be sent`,
      );
    if (field.length === 14 && field.toLowerCase() === 'content-length') length = Number(value);
    text += `${field}: ${value}\r\n`;
  }
  if (Buffer.isBuffer(body)) {
    if (length === -1) text += `content-length: ${body.length}\r\n`;
    else if (length !== body.length)
      throw failure(
        UPSTREAM_ERRORS.bodyLength,
        `the body is ${body.length} bytes, its Content-Length says ${length}`,
      );
  } else if (body !== null) {
    if (length === -1) text += 'transfer-encoding: chunked\r\n';
  } else if (length === -1 && PAYLOAD_METHODS.has(req.method)) {
    text += 'content-length: 0\r\n';
  }
  return [`${text}\r\n`, length];
}
