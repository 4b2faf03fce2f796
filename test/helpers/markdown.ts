import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

/** The few Markdown readings the documentation tests need: fenced code blocks, relative links and heading anchors. */

const FENCE = /^```[^\n]*\n([\s\S]*?)^```$/gm;

/** The body of every fenced code block, in order. */
export function codeBlocks(markdown: string): string[] {
  return [...markdown.matchAll(FENCE)].map((match) => match[1]!);
}

/** The prose alone: fenced blocks and inline code spans removed (a `[x](y)` inside code is not a link). */
function prose(markdown: string): string {
  return markdown.replace(FENCE, '').replace(/`[^`\n]*`/g, '');
}

/** Every link target that is not a URL with a scheme: `docs/catch-up.md#status`, `deploy/`, `#options`. */
export function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

/** The anchors a Markdown renderer makes of the headings: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchors(markdown: string): Set<string> {
  const headings = [...markdown.replace(FENCE, '').matchAll(/^#{1,6} +(.+)$/gm)].map((match) => match[1]!);
  return new Set(
    headings.map((heading) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

/** A fenced block of shell commands and what its info string says of it (`sh exit=8`, `sh not-run="why"`). */
export interface CommandBlock {
  /** The block's first line in the file (1-based), for messages. */
  readonly line: number;
  readonly language: string;
  readonly body: string;
  /** The exit the block ends with when run as written (default 0). */
  readonly exit: number;
  /** Why the block cannot run here (a server that runs until stopped, a service the test has no stand-in for). */
  readonly notRun?: string;
  /** The block is a file's content, at this path, not commands (`sh file=/etc/area-metrics/env`). */
  readonly file?: string;
}

const COMMAND_LANGUAGES = new Set(['sh', 'bash', 'shell', 'cron']);
const FENCE_WITH_INFO = /^```(\S*)([^\n]*)\n([\s\S]*?)^```$/gm;

/** The info string's `name=value` or `name="value"` settings (renderers take only its first word, the language). */
function infoSettings(info: string): Map<string, string> {
  return new Map([...info.matchAll(/(\w[\w-]*)=(?:"([^"]*)"|(\S+))/g)].map((match) => [match[1]!, match[2] ?? match[3]!]));
}

/** Every fenced block in a shell language, with its settings. */
export function commandBlocks(markdown: string): CommandBlock[] {
  return [...markdown.matchAll(FENCE_WITH_INFO)].flatMap((match) => {
    const language = match[1]!;
    if (!COMMAND_LANGUAGES.has(language)) return [];
    const settings = infoSettings(match[2]!);
    const notRun = settings.get('not-run');
    const file = settings.get('file');
    return [
      {
        line: markdown.slice(0, match.index).split('\n').length,
        language,
        body: match[3]!,
        exit: Number(settings.get('exit') ?? 0),
        ...(notRun === undefined ? {} : { notRun }),
        ...(file === undefined ? {} : { file }),
      },
    ];
  });
}

/** The SQL statements of docs/import.md's block marked `marker` (```sql <marker>), comment lines dropped, in order. */
export function docQueries(marker: string): string[] {
  const doc = readFileSync(join(ROOT, 'docs/import.md'), 'utf8');
  const block = [...doc.matchAll(FENCE_WITH_INFO)].find((match) => match[1] === 'sql' && match[2]!.trim() === marker)?.[3];
  if (block === undefined) throw new Error(`docs/import.md has no \`\`\`sql ${marker} block`);
  return block
    .split(';')
    .map((statement) =>
      statement
        .split('\n')
        .filter((line) => !line.startsWith('--'))
        .join('\n')
        .trim(),
    )
    .filter((statement) => statement !== '');
}
