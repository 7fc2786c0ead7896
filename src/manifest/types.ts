/**
 * The extension manifest as TypeScript types. The same shape is accepted as JSON
 * (`parseExtensionManifest`), so every field is plain data.
 */
import type { WireClass } from '../policy/types.js';

/** How the connection's own credential is written into `Authorization`. */
export type AuthScheme =
  /** `Authorization: Bearer <secret>` (most APIs; the default) */
  | 'bearer'
  /** `Authorization: token <secret>` (gh) */
  | 'token'
  /** `Authorization: Basic base64(user:password)`; a token kind is sent as `base64(token:)` */
  | 'basic';

/** Which hosts get a credential; with scopes, a token minted for those scopes. */
export interface CredentialHostsEntry {
  /** exact lower-case DNS names, each in the extension's egress list */
  hosts: string[];
  /** OAuth scopes; present → a client-credentials token minted for them is stamped */
  scopes?: string[];
}

/** A wire-policy override; the classifier interprets it, here only its shape. */
export interface WireOverride {
  match: { method?: string; pathPattern?: string; graphqlOperation?: string };
  wireClass: WireClass;
}

/** One command of a crawled help tree (shape only; the help-tree work owns the rest). */
export interface HelpCommand {
  name: string;
  summary?: string;
  commands?: HelpCommand[];
  [extra: string]: unknown;
}

/** A crawled help tree: the root's summary and its top-level commands. */
export interface HelpTree {
  summary?: string;
  /** set when the crawl stopped early; only `max_depth` is accepted at load */
  partial?: { reason: string };
  commands: HelpCommand[];
  [extra: string]: unknown;
}

/** One vendor CLI of an extension (`defineCli`). */
export interface CliManifest {
  /** lower-case id; the agent's tool is `<id>_cli` */
  id: string;
  /** `image` names a sandbox profile; `entrypoint` is the program run */
  binary: { image: string; entrypoint: string };
  /** variables set to a placeholder so the CLI sends a request at all (GH_TOKEN) */
  credentialEnv?: string[];
  /** plain, non-secret settings for the CLI */
  env?: Record<string, string>;
  /** a variable set to the organization endpoint's host (GH_HOST) */
  endpointEnv?: string;
  helpTree?: HelpTree;
  helpCrawl?: { maxDepth: number };
  /** the toolkit (and so the credential) the CLI uses; docs/manifest.md says when it may be absent */
  toolkit?: string;
  /** how the connection's credential is stamped; default `bearer` (basic connections: always Basic) */
  authScheme?: AuthScheme;
  credentialHosts?: CredentialHostsEntry[];
  /** sign-in bootstrap: the child's token request is answered with a placeholder token */
  bootstrap?: { tokenEndpoint: 'credential.tokenUrl'; preamble: string[] };
  wirePolicy?: { overrides: WireOverride[] };
}

/** A toolkit is bound to a credential: `auth.default` (the connection) or another one. */
export interface ToolkitManifest {
  credential: string;
}

/** An extension (`defineExtension`): egress hosts, toolkits and up to 8 CLIs. */
export interface ExtensionManifest {
  id: string;
  /** exact lower-case DNS names the CLIs may reach */
  egress: string[];
  toolkits?: Record<string, ToolkitManifest>;
  clis: CliManifest[];
}

/** The credential name that means "the connection the host platform hands in". */
export const DEFAULT_CREDENTIAL = 'auth.default';
