/**
 * Message text as Markdown (GFM), sanitized: raw HTML is shown as literal text, links open
 * only for http/https/mailto (in a new tab, without opener or referrer), `sand-msg:<address>`
 * links scroll to that message, images at http/https addresses wait behind a placeholder
 * until the user loads them through the gateway (RemoteImage.tsx), fenced code gets a
 * CodeBlock, and text too long for Markdown a LongText.
 */
import { memo, useContext, type ReactNode } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { CodeBlock } from './CodeBlock.tsx';
import { LONG_TEXT, LongText } from './LongText.tsx';
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
  if (text.length > LONG_TEXT) return <LongText text={text} />;
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
