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
 *
 * A valid manifest can still name, as a CLI's `binary.image`, an image rather than a sandbox
 * profile (`gh` rather than `plain` or `isolated`): that CLI runs only where an operator
 * configuration pins an image of that name, and a bare `createRunner` refuses it. `data.notes`
 * says so for each such CLI, so the validation tells what the runner will do.
 */
import { defineTool } from '../cli/define.js';

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
      output: {
        valid: true,
        problems: [],
        notes: [
          {
            path: 'binary.image',
            note: '"node" is an image name, not a sandbox profile (plain | isolated): it runs only through an operator configuration that pins an image "node" (createHost, clibroker daemon, clibroker serve); createRunner without RunInput.image refuses it',
          },
        ],
      },
    },
  ],
  outputShape:
    '{valid: boolean, problems: {code: string, path: string, value?: string, expected: string}[], notes: {path: string, note: string}[], sha256?: string (of the --manifest-file bytes, to pin)}',
  async run(p, ctx) {
    const [{ cliManifestProblems, extensionProblems }, { manifestSha256 }, { SANDBOX_PROFILES }] =
      await Promise.all([
        import('../manifest/index.js'),
        import('../config/canonical.js'),
        import('../sandbox/types.js'),
      ]);
    const list = p.kind === 'cli' ? cliManifestProblems(p.manifest) : extensionProblems(p.manifest);
    const text = ctx.files?.['manifest'];
    const m = p.manifest as { clis?: unknown; binary?: unknown };
    const clis =
      p.kind === 'cli'
        ? [[undefined, m] as const]
        : Array.isArray(m.clis)
          ? m.clis.map((c, i) => [i, c] as const)
          : [];
    const notes: { path: string; note: string }[] = [];
    for (const [i, cli] of clis) {
      const image = (cli as { binary?: { image?: unknown } } | null)?.binary?.image;
      if (typeof image !== 'string' || (SANDBOX_PROFILES as readonly string[]).includes(image)) continue;
      const shown = JSON.stringify(image.slice(0, 64));
      notes.push({
        path: i === undefined ? 'binary.image' : `clis[${i}].binary.image`,
        note: `${shown} is an image name, not a sandbox profile (plain | isolated): it runs only through an operator configuration that pins an image ${shown} (createHost, clibroker daemon, clibroker serve); createRunner without RunInput.image refuses it`,
      });
    }
    return {
      valid: list.items.length === 0,
      problems: list.items,
      notes,
      ...(text === undefined ? {} : { sha256: manifestSha256(text) }),
    };
  },
});
