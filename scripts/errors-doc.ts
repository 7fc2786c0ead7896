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
    '`{"message": "...", "error": {"code", "message", "policyCode"?}}` (gh prints `message`, az prints',
    '`error.code` / `error.message`). Policy refusals use `code: "POLICY_BLOCKED"` with the rule in `policyCode`.',
    '',
    '| code | HTTP status | side | retry | meaning |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const [code, s] of Object.entries(CATALOGUE)) {
    const status = s.status ? `${s.status} ${REASON_PHRASES[s.status] ?? ''}`.trim() : '—';
    const meaning = s.remedy ? `${s.summary} ${s.remedy}` : s.summary;
    lines.push(`| \`${code}\` | ${status} | ${s.side} | ${s.retry ? 'yes' : 'no'} | ${meaning.replaceAll('|', '\\|')} |`);
  }
  return `${lines.join('\n')}\n`;
}
