/**
 * `npm run help-trees`: crawls the installed gh, az and curl and writes help-trees/<cli>.json.
 * Run it after a CLI's version changes (the test in tests/help/committed.test.ts fails
 * until then); `--check` writes nothing and exits 1 when a committed tree differs.
 * Arguments: the CLIs to crawl (default: all three).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { COMMITTED_TREES } from '../src/help/committed.js';
import { serializeHelpTreeDocument } from '../src/help/document.js';
import { generateHelpTreeDocument } from '../src/help/generate.js';
import { KNOWN_CLIS } from '../src/help/known.js';

const argv = process.argv.slice(2);
const check = argv.includes('--check');
const ids = argv.filter((a) => a !== '--check');
let differs = false;
for (const cli of ids.length ? ids : COMMITTED_TREES) {
  const known = KNOWN_CLIS[cli];
  if (!known) throw new Error(`no crawl settings for ${cli} (src/help/known.ts)`);
  const { document, result } = await generateHelpTreeDocument({ cli, ...known });
  const text = serializeHelpTreeDocument(document);
  const file = new URL(`../help-trees/${cli}.json`, import.meta.url);
  let before = '';
  try {
    before = readFileSync(file, 'utf8');
  } catch {
    // not committed yet
  }
  const same = before === text;
  if (!same) differs = true;
  const { pages, durationMs, failed } = result.stats;
  console.log(
    `${cli}: ${document.version}; ${pages} pages in ${durationMs} ms${failed.length ? `; failed: ${failed.join(', ')}` : ''}${document.tree.partial ? `; partial: ${document.tree.partial.reason}` : ''}; ${same ? 'unchanged' : check ? 'DIFFERS' : 'written'}`,
  );
  for (const a of result.networkAttempts) console.log(`  refused: ${a.command} → ${a.method} ${a.target}`);
  if (!same && !check) writeFileSync(file, text);
}
if (check && differs) process.exitCode = 1;
