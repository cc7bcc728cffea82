/**
 * A file in the conversation: name, size and media type, a download button, and a preview
 * built in the page (images inline; PDF, Word and Excel on request, their libraries loaded
 * only then). Other files can only be downloaded.
 */
import { lazy, memo, Suspense, useContext, useEffect, useState, type ComponentType } from 'react';
import { ConversationContext } from './conversation-context.ts';
import { displayableImage } from './images.ts';
import {
  formatBytes,
  isLoadable,
  loadBlob,
  mediaTypeOf,
  previewKindOf,
  sourceKey,
  type FileSource,
  type PreviewKind,
} from './files.ts';
import { RemoteImage } from './RemoteImage.tsx';

type PreviewComponent = ComponentType<{ blob: Blob; fileName: string }>;

const PREVIEWS: Record<Exclude<PreviewKind, 'image' | 'none'>, PreviewComponent> = {
  pdf: lazy(() => import('./previews/pdf.tsx')),
  docx: lazy(() => import('./previews/docx.tsx')),
  xlsx: lazy(() => import('./previews/xlsx.tsx')),
};

const PREVIEW_LABEL: Record<PreviewKind, string> = {
  image: 'image',
  pdf: 'PDF',
  docx: 'Word document',
  xlsx: 'Excel workbook',
  none: 'file',
};

type Fetchable = Extract<FileSource, { kind: 'attachment' | 'upload' }>;

function isFetchable(source: FileSource): source is Fetchable {
  return source.kind === 'attachment' || source.kind === 'upload';
}

/** Loads a source's bytes when `enabled`; errors are returned, not thrown. */
export function useBlob(source: FileSource, enabled: boolean): { blob: Blob | null; error: string | null } {
  const context = useContext(ConversationContext);
  const [state, setState] = useState<{ blob: Blob | null; error: string | null }>({
    blob: null,
    error: null,
  });
  const key = isLoadable(source) ? sourceKey(source) : null;
  useEffect(() => {
    if (!enabled || !context || !isLoadable(source)) return;
    let live = true;
    loadBlob(context.client, context.agentId, source).then(
      (blob) => live && setState({ blob, error: null }),
      (error: unknown) =>
        live && setState({ blob: null, error: error instanceof Error ? error.message : String(error) }),
    );
    return () => {
      live = false;
    };
    // `key` identifies the source; the object itself is rebuilt on each render.
  }, [enabled, context, key]);
  return state;
}

/** A `blob:` URL for an image's bytes (SVG rasterized first), revoked on unmount. */
export function useImageUrl(
  blob: Blob | null,
  mediaType: string,
): { url: string | null; error: string | null } {
  const [state, setState] = useState<{ url: string | null; error: string | null }>({
    url: null,
    error: null,
  });
  useEffect(() => {
    if (!blob) return;
    let made: string | null = null;
    let live = true;
    displayableImage(blob, mediaType).then(
      (image) => {
        if (!live) return;
        made = URL.createObjectURL(image);
        setState({ url: made, error: null });
      },
      (error: unknown) =>
        live && setState({ url: null, error: `The image could not be shown (${String(error)}).` }),
    );
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
      setState({ url: null, error: null });
    };
  }, [blob, mediaType]);
  return state;
}

export interface FileCardProps {
  fileName: string;
  size: number | undefined;
  mediaType: string | undefined;
  alt?: string | undefined;
  source: FileSource;
}

export const FileCard = memo(function FileCard({ fileName, size, mediaType, alt, source }: FileCardProps) {
  const context = useContext(ConversationContext);
  const type = mediaTypeOf(mediaType, fileName);
  const kind = previewKindOf(type);
  const fetchable = isFetchable(source);
  const [previewOpen, setPreviewOpen] = useState(false);
  const [downloadRequested, setDownloadRequested] = useState(false);
  const wantBytes = fetchable && (kind === 'image' || previewOpen || downloadRequested);
  const { blob, error: fetchError } = useBlob(source, wantBytes);
  const image = useImageUrl(kind === 'image' ? blob : null, type);
  const error = fetchError ?? image.error;

  // A download asked for before the bytes arrived completes once they do. `download` saves
  // the file; it never opens it in this origin.
  useEffect(() => {
    if (!downloadRequested || !blob) return;
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = fileName;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    setDownloadRequested(false);
  }, [downloadRequested, blob, fileName]);

  const Preview = kind === 'image' || kind === 'none' ? null : PREVIEWS[kind];
  const imageSrc = kind === 'image' ? image.url : null;
  const caption = alt ?? fileName;
  const imageButton = (src: string) => (
    <button
      type="button"
      className="image-button"
      onClick={() => context?.openLightbox({ src, caption })}
      aria-label={`View ${caption} full screen`}
    >
      <img className="file-image" src={src} alt={caption} title={caption} />
    </button>
  );

  return (
    <div className="file-card" data-testid="file-card" data-media-type={type}>
      <div className="file-card-head">
        <span className="file-icon" aria-hidden="true">
          {kind === 'pdf'
            ? 'PDF'
            : kind === 'docx'
              ? 'DOC'
              : kind === 'xlsx'
                ? 'XLS'
                : kind === 'image'
                  ? 'IMG'
                  : 'FILE'}
        </span>
        <div className="file-meta">
          <span className="file-name" title={fileName}>
            {fileName}
          </span>
          <span className="file-details">
            {formatBytes(size)} · {type}
          </span>
        </div>
        <div className="file-actions">
          {Preview && fetchable && (
            <button
              type="button"
              onClick={() => setPreviewOpen((open) => !open)}
              aria-expanded={previewOpen}
              aria-label={`${previewOpen ? 'Hide' : 'Show'} preview of ${PREVIEW_LABEL[kind]} ${fileName}`}
              data-testid="file-preview-toggle"
            >
              {previewOpen ? 'Hide preview' : 'Preview'}
            </button>
          )}
          {fetchable && (
            <button
              type="button"
              onClick={() => setDownloadRequested(true)}
              aria-label={`Download ${fileName}`}
              data-testid="file-download"
            >
              Download
            </button>
          )}
          {source.kind === 'remote' && (
            <a className="button" href={source.url} target="_blank" rel="noopener noreferrer">
              Open
            </a>
          )}
        </div>
      </div>
      {source.kind === 'unavailable' && <p className="preview-note">Not available here: {source.reason}.</p>}
      {error && (
        <p className="preview-note error" role="alert">
          {error}
        </p>
      )}
      {imageSrc && imageButton(imageSrc)}
      {kind === 'image' && source.kind === 'remote' && (
        <RemoteImage url={source.url} alt={caption}>
          {imageButton}
        </RemoteImage>
      )}
      {alt && (
        <p className="file-caption" data-testid="file-caption">
          {alt}
        </p>
      )}
      {Preview && previewOpen && blob && (
        <Suspense fallback={<p className="preview-note">Loading the previewer…</p>}>
          <Preview blob={blob} fileName={fileName} />
        </Suspense>
      )}
      {Preview && previewOpen && !blob && !error && <p className="preview-note">Fetching…</p>}
    </div>
  );
});
