/**
 * Reading one `--help` page: the command's summary and the subcommands (or options) it
 * lists. Pure and format-driven, not CLI-driven: the generators in use agree on a page made
 * of headed sections with indented `name  summary` rows, and differ in the headings and the
 * separators, which are tabled here:
 *
 * | generator | command headings | row |
 * |---|---|---|
 * | gh (cobra, own template) | `CORE COMMANDS`, `GENERAL COMMANDS`, … | `  name:   summary` |
 * | cobra (kubectl, docker) | `Available Commands:`, `Basic Commands (Beginner):`, … | `  name   summary` |
 * | az (knack) | `Subgroups:` (groups), `Commands:` | `  name  [Preview] : summary`, wrapped rows indented |
 * | clap | `Commands:` (v4), `SUBCOMMANDS:` (v2/v3) | `  name  summary` |
 * | oclif | `COMMANDS`, `TOPICS` (groups) | `  name  summary` |
 * | click | `Commands:` | `  name  summary`, wrapped rows indented |
 * | argparse | `positional arguments:` holding `{a,b}` | `    a   summary` under the `{a,b}` row |
 * | curl `--help all` | none: options right under `Usage:` | ` -a, --append   summary` |
 */

/** What a listed entry is, when the page says so (az's Subgroups, oclif's TOPICS). */
export type EntryKind = 'group' | 'command' | 'option';

export interface HelpEntry {
  name: string;
  summary?: string;
  /** `group`: the page says it has subcommands; `command`: says it has none; absent: unknown */
  kind?: EntryKind;
}

export interface ParsedHelp {
  summary?: string;
  entries: HelpEntry[];
}

// Colour codes and overstrike (man-style bold) some generators emit even without a TTY.
const ANSI_RE = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|.\x08/g;

interface Section {
  title: string;
  /** text on the heading line after its colon (`Usage: curl [options...] <url>`) */
  inline: string;
  lines: string[];
}

const ALL_CAPS_HEADING = /^[A-Z][A-Z0-9 ]*[A-Z0-9]$/;
const COLON_HEADING = /^([A-Za-z][A-Za-z0-9 ()/_,-]{0,60}):(?:\s+(.*))?$/;
const AZ_HEADING = /^(Group|Command)$/;

function headingOf(line: string): { title: string; inline: string } | undefined {
  if (line === '' || /^\s/.test(line)) return undefined;
  if (AZ_HEADING.test(line) || ALL_CAPS_HEADING.test(line)) return { title: line, inline: '' };
  const m = COLON_HEADING.exec(line);
  if (m) return { title: m[1]!, inline: (m[2] ?? '').trim() };
  return undefined;
}

/** The page cut into a preamble (before any heading) and headed sections, in order. */
function sections(text: string): { preamble: string[]; sections: Section[] } {
  const lines = text
    .replace(ANSI_RE, '')
    .replace(/\r\n?/g, '\n')
    .replace(/\t/g, '        ')
    .split('\n')
    .map((l) => l.trimEnd());
  const preamble: string[] = [];
  const out: Section[] = [];
  for (const line of lines) {
    const h = headingOf(line);
    if (h) out.push({ ...h, lines: [] });
    else if (out.length > 0) out[out.length - 1]!.lines.push(line);
    else preamble.push(line);
  }
  return { preamble, sections: out };
}

/** Which headings list what: a command section, a group section, or neither. */
function sectionKind(title: string): 'commands' | 'groups' | undefined {
  const t = title.toLowerCase().trim();
  if (t === 'subgroups' || t === 'topics') return 'groups';
  if (t.includes('help topics')) return undefined;
  if (/\b(sub)?commands\b/.test(t)) return 'commands';
  return undefined;
}

const indentOf = (l: string): number => l.length - l.trimStart().length;

const ROW_RE =
  /^([A-Za-z0-9][\w.:-]*)\*?(?:,\s*[A-Za-z0-9][\w.:-]*)*:?((?:\s+\[[A-Za-z -]+\])*)(?:\s+:\s*|\s{2,}|\s*$)(.*)$/;

/** Indented `name  summary` rows; more-indented lines continue the row above. */
function rows(lines: readonly string[], kind: EntryKind | undefined): HelpEntry[] {
  const out: HelpEntry[] = [];
  let rowIndent = -1;
  for (const line of lines) {
    if (line.trim() === '') continue;
    const ind = indentOf(line);
    if (ind === 0) break;
    if (rowIndent < 0) rowIndent = ind;
    if (ind > rowIndent && out.length > 0) {
      const last = out[out.length - 1]!;
      last.summary = last.summary ? `${last.summary} ${line.trim()}` : line.trim();
      continue;
    }
    if (ind < rowIndent) rowIndent = ind;
    const m = ROW_RE.exec(line.trim());
    if (!m) continue;
    const summary = m[3]!.trim();
    out.push({ name: m[1]!.replace(/:$/, ''), ...(summary ? { summary } : {}), ...(kind ? { kind } : {}) });
  }
  return out;
}

/** argparse: `{a,b}` in `positional arguments:`, then each choice on its own, more indented. */
function argparseChoices(lines: readonly string[]): HelpEntry[] {
  const at = lines.findIndex((l) => /^\s+\{[\w.,-]+\}(\s|$)/.test(l));
  if (at < 0) return [];
  const choices = new Set(/\{([^}]*)\}/.exec(lines[at]!)![1]!.split(','));
  const base = indentOf(lines[at]!);
  const below = [];
  for (const l of lines.slice(at + 1)) {
    if (l.trim() !== '' && indentOf(l) <= base) break;
    below.push(l);
  }
  return rows(below, undefined).filter((e) => choices.has(e.name));
}

const OPTION_RE =
  /^\s+(?:(-[A-Za-z0-9#:]),\s+)?(--[A-Za-z0-9][\w.-]*)(?:[ =](<[^>]*>|\[[^\]]*\]|[A-Z][A-Z_]*))?\s+(\S.*)$/;

/** Options listed one per line (curl `--help all`), in the page's order. */
export function parseOptions(text: string): ParsedHelp {
  const seen = new Set<string>();
  const entries: HelpEntry[] = [];
  for (const line of text.replace(ANSI_RE, '').split(/\r?\n/)) {
    const m = OPTION_RE.exec(line);
    if (!m || seen.has(m[2]!)) continue;
    seen.add(m[2]!);
    entries.push({ name: m[2]!, summary: m[4]!.trim(), kind: 'option' });
  }
  const usage = /^usage:\s*(.+)$/im.exec(text);
  return { ...(usage ? { summary: `Usage: ${usage[1]!.trim()}` } : {}), entries };
}

/** The first paragraph of prose: before any heading, or right after a `Usage:` line (click). */
function summaryOf(preamble: readonly string[], secs: readonly Section[]): string | undefined {
  // az: `Group` / `Command` then `    az account : Manage Azure subscription information.`
  const az = secs.find((s) => AZ_HEADING.test(s.title));
  if (az) {
    const body = paragraph(az.lines) ?? '';
    const i = body.indexOf(' : ');
    return i >= 0 ? body.slice(i + 3).trim() || undefined : undefined;
  }
  // clap 3 starts with `name [version]` on a line of its own, the prose under it
  const lead = preamble.findIndex((l) => l.trim() !== '');
  const pre =
    lead >= 0 && /^\S+(?: v?\d[\w.+-]*)?$/.test(preamble[lead]!.trim()) && preamble[lead + 1]?.trim()
      ? paragraph(preamble.slice(lead + 1))
      : paragraph(preamble);
  if (pre) return pre;
  const usage = secs.find((s) => /^usage$/i.test(s.title.trim()));
  if (usage) {
    // the usage itself may wrap onto indented lines; the prose is the next paragraph
    const blank = usage.lines.findIndex((l) => l.trim() === '');
    if (blank >= 0) return paragraph(usage.lines.slice(blank));
  }
  return undefined;
}

function paragraph(lines: readonly string[]): string | undefined {
  const start = lines.findIndex((l) => l.trim() !== '');
  if (start < 0) return undefined;
  const para: string[] = [];
  for (const l of lines.slice(start)) {
    if (l.trim() === '') break;
    para.push(l.trim());
  }
  const text = para.join(' ');
  return text || undefined;
}

/**
 * The summary and the listed subcommands of one help page, in the page's order, each name
 * once (the first listing wins). `help` itself is left out: help is what the tree answers.
 */
export function parseHelp(text: string): ParsedHelp {
  const { preamble, sections: secs } = sections(text);
  const found: HelpEntry[] = [];
  for (const s of secs) {
    const kind = sectionKind(s.title);
    if (kind)
      found.push(...rows(s.lines, kind === 'groups' ? 'group' : azLike(secs) ? 'command' : undefined));
    else if (/^positional arguments$/i.test(s.title.trim())) found.push(...argparseChoices(s.lines));
  }
  // argparse puts a titled subparser group under its own heading, an untitled one anywhere
  if (found.length === 0) found.push(...argparseChoices(secs.flatMap((s) => s.lines)));
  const seen = new Set<string>();
  const entries = found.filter((e) => {
    if (e.name === 'help' || seen.has(e.name)) return false;
    seen.add(e.name);
    return true;
  });
  const summary = summaryOf(preamble, secs);
  return { ...(summary ? { summary } : {}), entries };
}

/** az says which rows are groups (`Subgroups:`), so its `Commands:` rows are known leaves. */
function azLike(secs: readonly Section[]): boolean {
  return secs.some((s) => s.title === 'Subgroups') || secs.some((s) => AZ_HEADING.test(s.title));
}
