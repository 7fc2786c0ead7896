/**
 * undici, loaded the first time a broker's dispatcher is read or a token minter needs one
 * (the broker's own requests go through pool.ts). undici's main entry loads everything it
 * has — fetch, WebSocket, cookies, caches, mocks, HTTP/2 — about 80–100 ms of start-up, while
 * three parts are used: the Agent, the TLS connector and, for minting, the request helper.
 * Those three are loaded
 * from their own modules; should a later undici move them, the main entry is loaded instead
 * (slower, never broken). tests/package/undici-parts.test.ts checks that the installed undici
 * still has them.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

/** The parts of undici the broker uses. */
export interface UndiciParts {
  readonly Agent: typeof Undici.Agent;
  readonly buildConnector: typeof Undici.buildConnector;
  /** undici's `request(url, opts)`, bound to the dispatcher given in `opts.dispatcher` */
  readonly request: (
    url: string,
    opts: Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Undici.Dispatcher },
  ) => Promise<Undici.Dispatcher.ResponseData>;
  /** where they came from: 'parts' (their own modules) or 'main' (the fallback) */
  readonly from: 'parts' | 'main';
}

let parts: UndiciParts | undefined;

/** undici's parts, loaded on the first call. */
export function undici(): UndiciParts {
  parts ??= load();
  return parts;
}

function load(): UndiciParts {
  const require = createRequire(import.meta.url);
  try {
    const Agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
    const buildConnector = require('undici/lib/core/connect.js') as typeof Undici.buildConnector;
    const apiRequest = require('undici/lib/api/api-request.js') as (
      this: Undici.Dispatcher,
      opts: Undici.Dispatcher.RequestOptions,
    ) => Promise<Undici.Dispatcher.ResponseData>;
    if (
      typeof Agent !== 'function' ||
      typeof buildConnector !== 'function' ||
      typeof apiRequest !== 'function'
    )
      throw new Error('undici moved its parts');
    const request: UndiciParts['request'] = (url, { dispatcher, ...opts }) => {
      const u = new URL(url);
      return apiRequest.call(dispatcher, { ...opts, origin: u.origin, path: `${u.pathname}${u.search}` });
    };
    return { Agent, buildConnector, request, from: 'parts' };
  } catch {
    const u = require('undici') as typeof Undici;
    return {
      Agent: u.Agent,
      buildConnector: u.buildConnector,
      request: (url, opts) => u.request(url, opts),
      from: 'main',
    };
  }
}
