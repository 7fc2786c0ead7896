/**
 * Micro-bench for the bounded GraphQL classifier, against graphql-js `parse`
 * measured in the same run. Run: `npx tsx bench/micro/graphql-classify.ts`.
 * Goals: a 2 KB gh-style query ≤ 10 µs; an 8 MiB mutation with one huge string ≤ 15 ms;
 * a 1 MiB document of many small tokens ≤ 20 ms with ≤ 16 MiB heap growth.
 */
import { parse } from 'graphql';
import { classify, type ClassifyInput, scanDocument } from '../../src/policy/index.js';
import { fmtBytes, fmtNs, gc, heapOf, table, timeEachNs, timeNs } from './timing.js';

/**
 * Growth of memory outside the V8 heap during one call (`external`: Buffers and the external
 * strings Node makes for large latin1/UTF-8 decodes), which `heapUsed` does not show.
 */
function externalOf(fn: () => unknown): number {
  gc();
  gc();
  const before = process.memoryUsage().external;
  const keep = fn();
  const grown = process.memoryUsage().external - before;
  if (keep === Symbol.for('never')) console.log(keep);
  return grown;
}

const HEADERS = { 'content-type': 'application/json; charset=utf-8' };
const post = (query: string, variables?: unknown): ClassifyInput => ({
  method: 'POST',
  target: '/graphql',
  headers: HEADERS,
  body: Buffer.from(JSON.stringify({ query, variables })),
});

/** `gh issue list`, with the fragment gh 2.23 sends for its `--json` fields (~2 KB). */
const GH_2KB = `fragment issue on Issue {
	number
	title
	url
	state
	stateReason
	createdAt
	updatedAt
	closedAt
	body
	author { login ... on User { name } }
	assignees(first: 100) { nodes { id login name databaseId } totalCount }
	labels(first: 100) { nodes { id name description color } totalCount }
	milestone { number title description dueOn }
	comments(first: 100) { nodes { id author { login } authorAssociation body createdAt includesCreatedEdit isMinimized minimizedReason reactionGroups { content users { totalCount } } } totalCount }
	projectCards(first: 100) { nodes { project { name } column { name } } totalCount }
	projectItems(first: 100) { nodes { id project { id title } status: fieldValueByName(name: "Status") { ... on ProjectV2ItemFieldSingleSelectValue { optionId name } } } totalCount }
	reactionGroups { content users { totalCount } }
	timelineItems(last: 1, itemTypes: [CLOSED_EVENT, REOPENED_EVENT]) { nodes { __typename ... on ClosedEvent { createdAt actor { login } } ... on ReopenedEvent { createdAt actor { login } } } }
	linkedBranches(first: 10) { nodes { ref { name repository { nameWithOwner } } } }
	participants(first: 100) { nodes { login } totalCount }
	viewerSubscription viewerCanUpdate viewerDidAuthor
}

query IssueList($owner: String!, $repo: String!, $limit: Int, $endCursor: String, $states: [IssueState!] = OPEN, $assignee: String, $author: String, $mention: String, $milestone: String) {
	repository(owner: $owner, name: $repo) {
		hasIssuesEnabled
		issues(first: $limit, after: $endCursor, orderBy: {field: CREATED_AT, direction: DESC}, states: $states, filterBy: {assignee: $assignee, createdBy: $author, mentioned: $mention, milestone: $milestone}) {
			totalCount
			nodes {
				...issue
			}
			pageInfo {
				hasNextPage
				endCursor
			}
		}
	}
}`;

const HUGE = `mutation IssueCreate { createIssue(input: {repositoryId: "R_1", title: "t", body: "${'x'.repeat(8 * 1024 * 1024 - 200)}"}) { issue { url } } }`;
const letters = 'abcdefghijklmnopqrstuvwxyz';
const MANY = `query Many { repository { ${Array.from({ length: 512 * 1024 }, (_, i) => letters[i % 26]).join(' ')} } }`;

interface Row {
  case: string;
  size: string;
  'clibroker classify': string;
  'scan only': string;
  'graphql-js parse': string;
  ratio: string;
  goal: string;
  'heap Δ classify': string;
  'external Δ classify': string;
  'heap Δ parse (retained)': string;
}

const results: Record<string, unknown>[] = [];
const rows: Row[] = [];

/**
 * docs/benchmarks.md states absolute goals next to graphql-js timings on a reference machine; on a
 * loaded or slower box the absolute numbers move together, so also check the ratio they imply
 * (goal vs the slow end of the graphql-js range: 10 µs vs 18 µs, 20 ms vs 155 ms).
 */
const RATIO_GOALS: Record<string, number> = { '2kb-gh-query': 18 / 10, '1mib-many-small-tokens': 155 / 20 };

function run(
  name: string,
  doc: string,
  goalNs: number,
  batch: number,
  rounds: number,
  heapGoal?: number,
): void {
  const input = post(
    doc,
    name === '2kb-gh-query' ? { limit: 30, owner: 'acme', repo: 'app', states: ['OPEN'] } : undefined,
  );
  const check = classify(input);
  if (!check.graphql?.parsed) throw new Error(`${name}: did not parse (${check.graphql?.unparsedReason})`);
  // small documents: batches; multi-MiB ones: single calls after a GC each, for both sides
  const time = (fn: () => unknown, b: number, r: number) =>
    batch === 1 ? timeEachNs(fn, r) : timeNs(fn, b, r);
  const ours = time(() => classify(input), batch, rounds);
  const scan = time(() => scanDocument(doc), batch, rounds);
  const theirs = time(
    () => parse(doc),
    Math.max(1, Math.floor(batch / 4)),
    Math.max(3, Math.floor(rounds / 2)),
  );
  const heapOurs = heapOf(() => classify(input));
  const externalOurs = externalOf(() => classify(input));
  const heapTheirs = heapOf(() => parse(doc));
  rows.push({
    case: name,
    size:
      fmtBytes(input.body!.length).replace(' MiB', '') === '0.0'
        ? `${input.body!.length} B`
        : fmtBytes(input.body!.length),
    'clibroker classify': fmtNs(ours),
    'scan only': fmtNs(scan),
    'graphql-js parse': fmtNs(theirs),
    ratio: `${(theirs / ours).toFixed(1)}× faster${RATIO_GOALS[name] === undefined ? '' : ` (${theirs / ours >= RATIO_GOALS[name]! ? '✓' : '✗'} ≥ ${RATIO_GOALS[name]!.toFixed(1)}×)`}`,
    goal: `${ours <= goalNs ? '✓' : '✗'} ≤ ${fmtNs(goalNs)}${heapGoal === undefined ? '' : `, ${heapOurs.grownBytes + externalOurs <= heapGoal ? '✓' : '✗'} ≤ ${fmtBytes(heapGoal)}`}`,
    'heap Δ classify': fmtBytes(heapOurs.grownBytes),
    'external Δ classify': fmtBytes(externalOurs),
    'heap Δ parse (retained)': fmtBytes(heapTheirs.retainedBytes),
  });
  results.push({
    case: name,
    bodyBytes: input.body!.length,
    classifyNs: Math.round(ours),
    scanNs: Math.round(scan),
    graphqlJsParseNs: Math.round(theirs),
    ratio: Number((theirs / ours).toFixed(2)),
    goalNs,
    meetsTimeGoal: ours <= goalNs,
    ...(RATIO_GOALS[name] === undefined
      ? {}
      : {
          ratioGoal: Number(RATIO_GOALS[name]!.toFixed(2)),
          meetsRatioGoal: theirs / ours >= RATIO_GOALS[name]!,
        }),
    heapGrowthBytes: heapOurs.grownBytes,
    heapRetainedBytes: heapOurs.retainedBytes,
    externalGrowthBytes: externalOurs,
    graphqlJsHeapRetainedBytes: heapTheirs.retainedBytes,
    // the memory goal counts the heap and memory outside it: a large decoded string is external
    ...(heapGoal === undefined
      ? {}
      : { heapGoalBytes: heapGoal, meetsHeapGoal: heapOurs.grownBytes + externalOurs <= heapGoal }),
  });
}

run('2kb-gh-query', GH_2KB, 10_000, 2000, 21);
run('8mib-mutation-one-string', HUGE, 15_000_000, 1, 9);
run('1mib-many-small-tokens', MANY, 20_000_000, 1, 9, 16 * 1024 * 1024);

console.log(
  `node ${process.version}, graphql ${(await import('graphql')).version}, load ${(await import('node:os')).loadavg()[0]!.toFixed(2)}; time: median of batch means (2 KB) or of single calls after a GC each (MiB cases); heap Δ = heapUsed right after one call minus a collected heap before it; external Δ = the same for memory outside the V8 heap (large decoded strings, Buffers)`,
);
table(rows as unknown as Record<string, string>[]);
console.log(
  JSON.stringify({
    bench: 'graphql-classify',
    node: process.version,
    loadavg1m: (await import('node:os')).loadavg()[0],
    results,
  }),
);
