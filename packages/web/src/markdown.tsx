/**
 * Message text as Markdown (GFM), sanitized: raw HTML is shown as literal text, links open
 * only for http/https/mailto (in a new tab, without opener or referrer), `sand-msg:<address>`
 * links scroll to that message, images at http/https addresses wait behind a placeholder
 * until the user loads them through the gateway (RemoteImage.tsx), and fenced code is
 * highlighted once shiki has loaded.
 */
import { memo, useContext, useEffect, useState, type CSSProperties, type ReactNode } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import type { ThemedTokenWithVariants } from 'shiki/core';
import { highlight, languageFor } from './highlight.ts';
import { NavigationContext } from './navigation.ts';
import { RemoteImage } from './RemoteImage.tsx';
import { safeHref } from './sanitize.ts';

const SAND_MSG = 'sand-msg:';

/** react-markdown's URL hook: keep safe links and `sand-msg:` addresses, blank out the rest. */
export function markdownUrl(url: string, key: string): string {
  if (key === 'href' && url.startsWith(SAND_MSG)) return url;
  if (key === 'src') return /^https?:/i.test(url.trim()) ? (safeHref(url) ?? '') : '';
  return safeHref(url) ?? '';
}

interface MdastLike {
  type: string;
  value?: string;
  children?: MdastLike[];
}

/** Raw HTML in a message becomes plain text: visible as written, never interpreted. */
function remarkHtmlAsText() {
  return (tree: MdastLike) => {
    const walk = (node: MdastLike): void => {
      if (node.type === 'html') node.type = 'text';
      node.children?.forEach(walk);
    };
    walk(tree);
  };
}

function MarkdownLink({ href, children }: { href?: string | undefined; children?: ReactNode }) {
  const navigation = useContext(NavigationContext);
  if (href?.startsWith(SAND_MSG)) {
    const address = href.slice(SAND_MSG.length);
    return (
      <a
        href={`#msg-${encodeURIComponent(address)}`}
        className="msg-link"
        onClick={(event) => {
          event.preventDefault();
          navigation.scrollToEntry(address);
        }}
      >
        {children}
      </a>
    );
  }
  if (!href) return <span className="link-blocked">{children}</span>;
  return (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

const components: Components = {
  a: ({ href, children }) => <MarkdownLink href={href}>{children}</MarkdownLink>,
  img: ({ src, alt }) =>
    typeof src === 'string' && src !== '' ? (
      <RemoteImage url={src} alt={alt ?? ''}>
        {(loaded) => <img src={loaded} alt={alt ?? ''} title={alt} />}
      </RemoteImage>
    ) : (
      <span className="link-blocked">{alt ? `[image: ${alt}]` : '[image]'}</span>
    ),
  pre: ({ children }) => <>{children}</>,
  code: ({ className, children }) => {
    const text = typeof children === 'string' ? children : Array.isArray(children) ? children.join('') : '';
    const fence = /language-([\w+#-]+)/.exec(className ?? '');
    // Inline code has no language class and no newline.
    if (!fence && !text.includes('\n')) return <code>{children}</code>;
    return <CodeBlock code={text.replace(/\n$/, '')} info={fence?.[1]} />;
  },
};

const remarkPlugins = [remarkGfm, remarkHtmlAsText];

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={remarkPlugins}
        components={components}
        urlTransform={markdownUrl}
        skipHtml={false}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
});

export const CodeBlock = memo(function CodeBlock({
  code,
  info,
}: {
  code: string;
  info?: string | undefined;
}) {
  const language = languageFor(info);
  const [tokens, setTokens] = useState<ThemedTokenWithVariants[][] | null>(null);
  useEffect(() => {
    if (!language) return;
    let live = true;
    highlight(code, language)
      .then((result) => {
        if (live) setTokens(result);
      })
      .catch((error: unknown) => console.warn(`code highlighting (${language}) failed: ${String(error)}`));
    return () => {
      live = false;
    };
  }, [code, language]);
  return (
    <pre className="code-block" data-language={language ?? info ?? 'text'}>
      <code>
        {tokens
          ? tokens.map((line, i) => (
              <span className="code-line" key={i}>
                {line.map((token, j) => (
                  <span
                    key={j}
                    style={
                      {
                        '--shiki-light': token.variants.light?.color,
                        '--shiki-dark': token.variants.dark?.color,
                      } as CSSProperties
                    }
                  >
                    {token.content}
                  </span>
                ))}
                {'\n'}
              </span>
            ))
          : code}
      </code>
    </pre>
  );
});
