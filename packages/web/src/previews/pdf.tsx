/**
 * PDF preview: the first pages drawn to canvases by pdf.js. Loaded lazily with its worker,
 * which is bundled from the installed pdfjs-dist (no CDN; the CSP allows workers from 'self').
 */
import { getDocument, GlobalWorkerOptions, type PDFDocumentLoadingTask } from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';
import { useEffect, useRef, useState } from 'react';

GlobalWorkerOptions.workerSrc = workerUrl;

const MAX_PAGES = 3;
const MAX_WIDTH = 640;

export default function PdfPreview({ blob, fileName }: { blob: Blob; fileName: string }) {
  const container = useRef<HTMLDivElement>(null);
  const [status, setStatus] = useState<string>('Rendering…');

  useEffect(() => {
    let cancelled = false;
    let task: PDFDocumentLoadingTask | null = null;
    const host = container.current;
    void (async () => {
      try {
        const data = new Uint8Array(await blob.arrayBuffer());
        // pdf.js 6 compiles no code from a document (its isEvalSupported switch is gone); no XFA forms.
        task = getDocument({ data, enableXfa: false });
        const document = await task.promise;
        const pages = Math.min(MAX_PAGES, document.numPages);
        for (let number = 1; number <= pages && !cancelled && host; number++) {
          const page = await document.getPage(number);
          const base = page.getViewport({ scale: 1 });
          const scale = Math.min(MAX_WIDTH / base.width, 2);
          const ratio = window.devicePixelRatio || 1;
          const viewport = page.getViewport({ scale: scale * ratio });
          const canvas = window.document.createElement('canvas');
          canvas.width = Math.floor(viewport.width);
          canvas.height = Math.floor(viewport.height);
          canvas.style.width = `${Math.floor(viewport.width / ratio)}px`;
          canvas.setAttribute('aria-label', `${fileName}, page ${number}`);
          canvas.setAttribute('role', 'img');
          host.appendChild(canvas);
          await page.render({ canvas, viewport }).promise;
        }
        if (!cancelled) {
          setStatus(
            document.numPages > pages
              ? `Showing ${pages} of ${document.numPages} pages — download for the rest.`
              : `${document.numPages} page${document.numPages === 1 ? '' : 's'}.`,
          );
        }
      } catch (error) {
        if (!cancelled) setStatus(`This PDF could not be previewed (${String(error)}). Download it instead.`);
      }
    })();
    return () => {
      cancelled = true;
      // Destroying the loading task ends the document and its worker.
      void task?.destroy();
      host?.replaceChildren();
    };
  }, [blob, fileName]);

  return (
    <div className="preview preview-pdf" data-testid="preview-pdf">
      <div ref={container} className="pdf-pages" />
      <p className="preview-note">{status}</p>
    </div>
  );
}
