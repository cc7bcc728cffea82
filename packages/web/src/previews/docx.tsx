/**
 * Word preview: mammoth turns the .docx into HTML, `sanitizeHtml` keeps only allow-listed
 * elements, and the result is built as React elements (never assigned as HTML).
 */
import mammoth from 'mammoth';
import { createElement, useEffect, useState, type ReactNode } from 'react';
import { sanitizeHtml, type SafeNode } from '../sanitize.ts';

export function renderSafeNodes(nodes: readonly SafeNode[]): ReactNode[] {
  return nodes.map((node, index) => {
    if (node.type === 'text') return node.text;
    const props: Record<string, string | number> = { key: index };
    for (const [name, value] of Object.entries(node.attrs)) {
      props[name === 'colspan' ? 'colSpan' : name === 'rowspan' ? 'rowSpan' : name] = value;
    }
    if (node.tag === 'a') {
      props.target = '_blank';
      props.rel = 'noopener noreferrer';
    }
    if (node.tag === 'img') props.referrerPolicy = 'no-referrer';
    const children = node.children.length > 0 ? renderSafeNodes(node.children) : undefined;
    return createElement(node.tag, props, children);
  });
}

export default function DocxPreview({ blob }: { blob: Blob; fileName: string }) {
  const [content, setContent] = useState<SafeNode[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    void (async () => {
      try {
        const result = await mammoth.convertToHtml({ arrayBuffer: await blob.arrayBuffer() });
        if (!cancelled) setContent(sanitizeHtml(result.value));
      } catch (error) {
        if (!cancelled)
          setProblem(`This document could not be previewed (${String(error)}). Download it instead.`);
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [blob]);

  if (problem) return <p className="preview-note">{problem}</p>;
  if (!content) return <p className="preview-note">Rendering…</p>;
  return (
    <div className="preview preview-docx" data-testid="preview-docx">
      {content.length > 0 ? renderSafeNodes(content) : <p className="preview-note">The document is empty.</p>}
    </div>
  );
}
