import { MESSAGES } from '../src/error-messages.js';
import { CATALOGUE, type ErrorCode, REASON_PHRASES } from '../src/errors.js';

/**
 * Data whose every field reads as its own name in angle brackets (`<host>`, `<approval.id>`),
 * nested and callable (`<offered>` for `offered.join(', ')`). `present` says which fields an
 * `in` check finds; `asked` collects the fields checked, so every branch of a template is shown.
 */
function placeholder(path: string, present: ReadonlySet<string>, asked: Set<string>): unknown {
  const shown = `<${path}>`;
  return new Proxy(() => undefined, {
    get(_, k) {
      if (k === Symbol.toPrimitive || k === 'toJSON' || k === 'toString') return () => shown;
      if (typeof k !== 'string') return undefined;
      return placeholder(path ? `${path}.${k}` : k, present, asked);
    },
    has(_, k) {
      if (typeof k !== 'string') return false;
      asked.add(k);
      return present.has(k);
    },
    apply: () => placeholder(path.split('.').slice(0, -1).join('.'), present, asked),
  });
}

/**
 * The shapes a code's message takes, with `<field>` where data goes: a fixed sentence, or each
 * branch of the template and each fixed wording it chooses from. A branch whose rendering
 * does not read is left out (`…` when none reads).
 */
export function messageShapes(code: ErrorCode): string[] {
  const t = (MESSAGES as Readonly<Partial<Record<ErrorCode, unknown>>>)[code];
  if (t === undefined) return [];
  if (typeof t === 'string') return [`${code}: ${t}`];
  const fn = t as ((d: unknown, c: typeof CATALOGUE) => string) & { variants?: Record<string, string> };
  const render = (present: ReadonlySet<string>, asked: Set<string>): string | undefined => {
    try {
      const s = String(fn(placeholder('', present, asked), CATALOGUE));
      return /undefined|\[object /.test(s) ? undefined : s;
    } catch {
      return undefined;
    }
  };
  const asked = new Set<string>();
  const shapes = [render(new Set(), asked)];
  for (const k of [...asked]) shapes.push(render(new Set([k]), new Set()));
  const fine = [...new Set([...shapes, ...Object.values(fn.variants ?? {})].filter((s) => s !== undefined))];
  return (fine.length > 0 ? fine : ['…']).map((s) => `${code}: ${s}`);
}

export function renderErrorsDoc(): string {
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from src/errors.ts by `npm run docs:errors`; tests/errors.test.ts fails when it drifts. -->',
    '',
    'Every failure clibroker reports carries one of these codes. Codes are never renamed or reused: every code',
    'ever shipped is listed in `tests/errors/codes.snapshot.txt`, and a test fails when one disappears (a new',
    'code is appended there). Every failure envelope of the bundled CLI carries one in `error.code`, mistakes',
    'in the command line included (`COMMAND_UNKNOWN`, `COMMAND_INPUT_INVALID`).',
    'Refusals the child CLI sees are HTTP responses with the status below, the standard reason phrase,',
    '`content-type: application/json` and the body',
    '`{"message": "...", "error": {"code", "message", "policyCode"?, "details"?}}` (gh prints `message`, az prints',
    '`error.code` / `error.message`). Policy refusals use `code: "POLICY_BLOCKED"` with the rule in',
    '`details.policyCode` (repeated as `error.policyCode` for clients that read it there), and a message that',
    'starts with the rule: `CLI_REQUEST_TIER_DENIED: …`.',
    '',
    'A call that fails fails with the same code wherever it is made — the in-process host, a gadget,',
    "`clibroker run` (the envelope's `error.code`), the Platform API and MCP — whatever the CLI's exit code.",
    'For the caller, only the two policy decisions about a request, its tier and where it goes',
    '(`CLI_REQUEST_TIER_DENIED`; `CLI_EGRESS_HOST_DENIED` or `CLI_EGRESS_ADDRESS_DENIED`), are',
    '`POLICY_BLOCKED` with the rule in `details.policyCode`; a confirmation rule (`CLI_CONFIRMATION_*`,',
    '`EXEC_ACTION_CONFIRMATION_DECLINED`) is the failure code itself. One refusal can be outlived: a request to',
    'a host outside the egress list (an update check) when the CLI still succeeds. That call completes, and its',
    'result lists the refusal in `outlivedRefusals`. A failed call that may have changed something at the',
    'vendor says `details.outcomeUnknown: true`, and names the writes of unknown outcome in',
    '`details.unknownOutcomes`: check them with a read before repeating.',
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
  lines.push(
    '',
    '## Messages',
    '',
    "A message starts with its code (a policy refusal with its rule). The words are the catalogue's",
    '(`src/error-messages.ts`): a call site passes data and the catalogue renders the message, so one code',
    'never has two wordings. Codes not listed here say their meaning above. The shapes, with `<field>` where',
    'data goes (a code with several fixed wordings lists each):',
    '',
  );
  for (const code of Object.keys(CATALOGUE) as ErrorCode[]) {
    for (const shape of messageShapes(code)) lines.push(`- \`${shape.replaceAll('`', "'")}\``);
  }
  return `${lines.join('\n')}\n`;
}
