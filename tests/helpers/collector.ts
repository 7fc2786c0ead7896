/**
 * A local OTLP/HTTP collector for the audit push: a real HTTP server on 127.0.0.1 that
 * collects every POST to /v1/logs (its headers and parsed JSON body), answers with `status`,
 * or holds every request unanswered while `hang()` is on. It can stop listening and listen
 * again on the same port (a collector that went away and came back).
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// biome-ignore lint/suspicious/noExplicitAny: collected JSON bodies, walked by the assertions
export type Json = any;

export interface CollectedPost {
  path: string;
  headers: IncomingMessage['headers'];
  body: Json;
}

export interface Collector {
  readonly port: number;
  /** the base URL to configure as `audit.otlp.endpoint` */
  readonly url: string;
  /** every POST answered or held, in arrival order */
  readonly posts: CollectedPost[];
  /** the status the next answers carry (default 200) */
  status: number;
  /** every log record of the answered POSTs (2xx), in arrival order */
  records(): Json[];
  /** the `clibroker.seq` of every record answered 2xx, in arrival order */
  seqs(): number[];
  /** hold every request from now on, unanswered */
  hang(): void;
  /** answer every held request (with `status`) and stop holding */
  release(): void;
  /** requests held now */
  held(): number;
  /** resolves once `check()` is true, re-checked at every request */
  until(check: () => boolean): Promise<void>;
  /** stop listening (held requests are answered first), keeping the port for `listen` */
  stop(): Promise<void>;
  /** listen again on the same port */
  listen(): Promise<void>;
  close(): Promise<void>;
}

function seqOf(record: Json): number {
  const a = (record.attributes as Json[]).find((x) => x.key === 'clibroker.seq');
  return Number(a?.value?.intValue);
}

/** A collector listening on a free port of 127.0.0.1 (or on `port`). */
export async function startCollector(port = 0): Promise<Collector> {
  const posts: CollectedPost[] = [];
  const answered: CollectedPost[] = [];
  const held: { res: ServerResponse; post: CollectedPost }[] = [];
  const waiters = new Set<() => void>();
  let hanging = false;
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const answer = (res: ServerResponse, post: CollectedPost, status: number) => {
    if (status >= 200 && status < 300) answered.push(post);
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    wake();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Json;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = { unparsed: Buffer.concat(chunks).toString('utf8') };
      }
      const post = { path: req.url ?? '', headers: req.headers, body };
      posts.push(post);
      if (hanging) {
        held.push({ res, post });
        wake();
      } else answer(res, post, c.status);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const bound = (server.address() as AddressInfo).port;
  const c: Collector = {
    port: bound,
    url: `http://127.0.0.1:${bound}`,
    posts,
    status: 200,
    records: () =>
      answered.flatMap((p) =>
        p.body.resourceLogs.flatMap((r: Json) => r.scopeLogs.flatMap((s: Json) => s.logRecords)),
      ),
    seqs: () => c.records().map(seqOf),
    hang() {
      hanging = true;
    },
    release() {
      hanging = false;
      for (const h of held.splice(0)) answer(h.res, h.post, c.status);
    },
    held: () => held.length,
    until(check) {
      if (check()) return Promise.resolve();
      return new Promise((resolve) => {
        const w = () => {
          if (!check()) return;
          waiters.delete(w);
          resolve();
        };
        waiters.add(w);
      });
    },
    async stop() {
      c.release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async listen() {
      server.listen(bound, '127.0.0.1');
      await once(server, 'listening');
    },
    async close() {
      if (server.listening) await c.stop();
    },
  };
  return c;
}
