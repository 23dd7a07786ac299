// Issue 22: the shell examples of README.md and docs/*.md that call the API, as a reader copies
// them. A ```sh (or bash, shell) block's logical lines (backslash continuations joined) that start
// with `curl` and name the service (http://127.0.0.1:3000 or $SALES_METRICS_URL) are examples, each
// expecting a 2xx unless the line ends with a comment `# → NNN` naming its status. A block whose curl
// runs inside a loop or a group (indented within the block) is run whole, as one example.
import fs from 'node:fs';
import path from 'node:path';

export interface DocExample {
  /** Where it is, as file:line, for the failure message. */
  readonly where: string;
  /** The command (or the whole block) as written. */
  readonly command: string;
  /** The status every call must answer: a number, or '2xx'. */
  readonly expected: number | '2xx';
}

const FENCE = /^(\s*)```(\w*)\s*$/;
const SHELLS = new Set(['sh', 'bash', 'shell']);
const NAMES_THE_SERVICE = /http:\/\/127\.0\.0\.1:3000|\$\{?SALES_METRICS_URL\b/;

interface Block {
  readonly file: string;
  readonly line: number;
  readonly lines: readonly string[];
}

/** The shell blocks of a Markdown text, their lines without the fence's own indentation. */
function shellBlocks(file: string, markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (!open) continue;
    const indent = open[1]?.length ?? 0;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !FENCE.test(lines[j] ?? '')) body.push((lines[j++] ?? '').slice(indent));
    if (SHELLS.has(open[2] ?? '')) blocks.push({ file, line: i + 2, lines: body });
    i = j;
  }
  return blocks;
}

/** Logical lines: a line ending with a backslash goes on with the next. */
function logicalLines(block: Block): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  for (let i = 0; i < block.lines.length; i++) {
    const start = i;
    let text = block.lines[i] ?? '';
    while (text.endsWith('\\') && i + 1 < block.lines.length)
      text = `${text.slice(0, -1)} ${block.lines[++i] ?? ''}`;
    out.push({ line: block.line + start, text });
  }
  return out;
}

export function examplesOf(file: string, markdown: string): DocExample[] {
  const examples: DocExample[] = [];
  for (const block of shellBlocks(file, markdown)) {
    const lines = logicalLines(block).filter(
      ({ text }) => /(^|\s)curl\s/.test(text) && NAMES_THE_SERVICE.test(text),
    );
    if (lines.some(({ text }) => /^\s/.test(text))) {
      examples.push({ where: `${file}:${block.line}`, command: block.lines.join('\n'), expected: '2xx' });
      continue;
    }
    for (const { line, text } of lines) {
      if (!text.startsWith('curl ')) continue;
      const marked = /#\s*→\s*(\d{3})\s*$/.exec(text);
      examples.push({
        where: `${file}:${line}`,
        command: text,
        expected: marked ? Number(marked[1]) : '2xx',
      });
    }
  }
  return examples;
}

/** The examples of README.md and every docs/*.md under root. */
export function documentedExamples(root: string): DocExample[] {
  const files = [
    'README.md',
    ...fs
      .readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
  return files.flatMap((file) => examplesOf(file, fs.readFileSync(path.join(root, file), 'utf8')));
}
