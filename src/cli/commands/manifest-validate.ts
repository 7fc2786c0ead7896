/**
 * `clibroker manifest validate`: every problem of an extension (or a single CLI)
 * manifest, each with its reason code, path, masked value and what is expected. The back-end
 * is `src/manifest`, loaded only when the command runs.
 *
 * An invalid manifest is a successful validation: `data.valid` is false and
 * `data.problems` lists every problem (an error envelope has room for one message only).
 * A manifest read from a file (`--manifest-file`, or stdin with `-`) also gets its
 * `sha256`, the hash an operator pins in the configuration after reviewing it: of the
 * file's bytes (the text read is the file's UTF-8, which is what the loader accepts).
 */
import { defineTool } from '../define.js';

export const manifestValidate = defineTool({
  namespace: 'manifest',
  name: 'validate',
  description:
    'Validate an extension manifest (or one CLI manifest) and list every problem with its reason code and path.',
  parameters: {
    manifest: { type: 'object', describe: 'the manifest as JSON (defineExtension / defineCli shape)' },
    kind: { type: 'enum', values: ['extension', 'cli'], default: 'extension', describe: 'what the JSON is' },
  },
  cli: {
    fileInputAlternatives: [
      {
        paramName: 'manifest',
        fileFlag: 'manifest-file',
        parseAs: 'json',
        description: 'read the manifest JSON from a file',
      },
    ],
  },
  examples: [
    {
      params: { manifest: { id: 'gh', binary: { image: 'node', entrypoint: 'gh' } }, kind: 'cli' },
      comment: 'check one CLI manifest',
      output: { valid: true, problems: [] },
    },
  ],
  outputShape:
    '{valid: boolean, problems: {code: string, path: string, value?: string, expected: string}[], sha256?: string (of the --manifest-file bytes, to pin)}',
  async run(p, ctx) {
    const [{ cliManifestProblems, extensionProblems }, { manifestSha256 }] = await Promise.all([
      import('../../manifest/index.js'),
      import('../../config/canonical.js'),
    ]);
    const list = p.kind === 'cli' ? cliManifestProblems(p.manifest) : extensionProblems(p.manifest);
    const text = ctx.files?.['manifest'];
    return {
      valid: list.items.length === 0,
      problems: list.items,
      ...(text === undefined ? {} : { sha256: manifestSha256(text) }),
    };
  },
});
