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
