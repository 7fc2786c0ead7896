import { CATALOGUE, REASON_PHRASES } from '../src/errors.js';

/** Renders docs/errors.md from the catalogue; tests/errors.test.ts keeps the file in sync. */
export function renderErrorsDoc(): string {
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from src/errors.ts by `npm run docs:errors`; tests/errors.test.ts fails when it drifts. -->',
    '',
    'Every failure clibroker reports carries one of these codes. Codes are never renamed or reused.',
    'Refusals the child CLI sees are HTTP responses with the status below, the standard reason phrase,',
    '`content-type: application/json` and the body',
    '`{"message": "...", "error": {"code", "message", "policyCode"?, "details"?}}` (gh prints `message`, az prints',
    '`error.code` / `error.message`). Policy refusals use `code: "POLICY_BLOCKED"` with the rule in',
    '`details.policyCode` (repeated as `error.policyCode` for clients that read it there), and a message that',
    'starts with the rule: `CLI_REQUEST_TIER_DENIED: …`. A call that fails fails with the same shape wherever it',
    "is made — the in-process host, `clibroker run` (the envelope's `error.code` and `error.details.policyCode`)",
    "and the daemon: a refused request makes the whole call fail with that code, whatever the CLI's exit code.",
    '',
    '| code | HTTP status | side | retry | meaning |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const [code, s] of Object.entries(CATALOGUE)) {
    const status = s.status ? `${s.status} ${REASON_PHRASES[s.status] ?? ''}`.trim() : '—';
    const meaning = s.remedy ? `${s.summary} ${s.remedy}` : s.summary;
    lines.push(
      `| \`${code}\` | ${status} | ${s.side} | ${s.retry ? 'yes' : 'no'} | ${meaning.replaceAll('|', '\\|')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
