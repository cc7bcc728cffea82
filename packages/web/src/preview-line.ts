/**
 * A message as one line of plain text, for places that show a glimpse of it (the sidebar's
 * preview): its Markdown read by the same parser the bubbles use, and only the words kept
 * (`**done**` reads "done", a link its text, an image its alt, a heading its words).
 */
import type { Nodes } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';

/** Enough source for a preview line; a 1 MB message is never parsed whole. */
const SOURCE_CHARS = 2_000;

export function previewLine(markdown: string, max = 240): string {
  const text = words(fromMarkdown(markdown.slice(0, SOURCE_CHARS)));
  return text.replace(/\s+/g, ' ').trim().slice(0, max);
}

function words(node: Nodes): string {
  if (node.type === 'text' || node.type === 'inlineCode' || node.type === 'code' || node.type === 'html')
    return node.value;
  if (node.type === 'image') return node.alt ?? '';
  if (node.type === 'break' || node.type === 'thematicBreak') return ' ';
  // Blocks (paragraphs, headings, list items) are set apart by a space; inline runs are not.
  if (!('children' in node)) return '';
  return node.children.map((child: Nodes) => words(child) + (isBlock(child) ? ' ' : '')).join('');
}

function isBlock(node: Nodes): boolean {
  return [
    'paragraph',
    'heading',
    'blockquote',
    'list',
    'listItem',
    'code',
    'table',
    'tableRow',
    'tableCell',
    'thematicBreak',
  ].includes(node.type);
}
