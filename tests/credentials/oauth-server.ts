/**
 * A local OAuth 2.0 token server over real HTTPS on 127.0.0.1, for the minting tests: it
 * counts requests, checks the client secret, and answers like AAD (form body in, JSON out).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { type TestPki, testPki } from '../helpers/pki.js';

export interface TokenRequest {
  path: string;
  form: URLSearchParams;
  contentType: string;
}

export type TokenResponder = (
  req: TokenRequest,
  n: number,
) => { status: number; body: unknown; delayMs?: number; raw?: string };

export interface OAuthServer {
  readonly host: string;
  readonly port: number;
  readonly pki: TestPki;
  readonly requests: TokenRequest[];
  /** `https://<host><path>` (port 443 in the URL; the dispatcher reaches the real port) */
  url(path?: string): string;
  respond(fn: TokenResponder): void;
  /** an undici dispatcher that sends `host:443` to this server on 127.0.0.1, trusting its CA */
  dispatcher(): Agent;
  close(): Promise<void>;
}

export const TENANT = '72f988bf-0000-4000-8000-000000000001';
export const TOKEN_PATH = `/${TENANT}/oauth2/v2.0/token`;

/** AAD-like default: a token per scope set, one hour. */
export function defaultResponder(secret: string): TokenResponder {
  return (req, n) => {
    if (req.form.get('client_secret') !== secret) {
      return {
        status: 401,
        body: {
          error: 'invalid_client',
          error_description: 'AADSTS7000215: Invalid client secret provided.',
        },
      };
    }
    return {
      status: 200,
      body: {
        token_type: 'Bearer',
        expires_in: 3599,
        access_token: `minted-${n}-${req.form.get('scope') ?? 'none'}`,
      },
      delayMs: 50,
    };
  };
}

export async function startOAuthServer(secret: string, host = 'login.example.test'): Promise<OAuthServer> {
  const pki = testPki('clibroker test OAuth CA');
  const leaf = pki.leaf(host);
  const requests: TokenRequest[] = [];
  let responder = defaultResponder(secret);
  const server = createServer(
    { key: leaf.key, cert: leaf.cert },
    (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const tr: TokenRequest = {
          path: req.url ?? '',
          form: new URLSearchParams(Buffer.concat(chunks).toString()),
          contentType: req.headers['content-type'] ?? '',
        };
        requests.push(tr);
        const out = responder(tr, requests.length);
        setTimeout(() => {
          const text = out.raw ?? JSON.stringify(out.body);
          res.writeHead(out.status, { 'content-type': out.raw ? 'text/plain' : 'application/json' });
          res.end(text);
        }, out.delayMs ?? 0);
      });
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const agents: Agent[] = [];
  return {
    host,
    port,
    pki,
    requests,
    url: (path = TOKEN_PATH) => `https://${host}${path}`,
    respond(fn) {
      responder = fn;
    },
    dispatcher() {
      const base = buildConnector({ ca: pki.caPem });
      const agent = new Agent({
        connect: (opts, cb) =>
          base({ ...opts, hostname: '127.0.0.1', port: String(port), servername: host }, cb),
      });
      agents.push(agent);
      return agent;
    },
    async close() {
      await Promise.all(agents.map((a) => a.close()));
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}
