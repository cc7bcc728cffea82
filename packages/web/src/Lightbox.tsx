/** A full-screen image with its caption; Esc, the close button or a click outside closes it. */
import { useEffect, useRef } from 'react';

export function Lightbox({ src, caption, onClose }: { src: string; caption: string; onClose: () => void }) {
  const closeButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const previous = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    closeButton.current?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        onClose();
      } else if (event.key === 'Tab') {
        // One focusable control: keep focus inside the dialog.
        event.preventDefault();
        closeButton.current?.focus();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      previous?.focus();
    };
  }, [onClose]);
  return (
    <div
      className="lightbox"
      role="dialog"
      aria-modal="true"
      aria-label={caption || 'Image'}
      data-testid="lightbox"
      onClick={(event) => {
        if (event.target === event.currentTarget) onClose();
      }}
    >
      <figure>
        <img src={src} alt={caption} referrerPolicy="no-referrer" />
        {caption && <figcaption>{caption}</figcaption>}
      </figure>
      <button
        ref={closeButton}
        type="button"
        className="lightbox-close"
        onClick={onClose}
        aria-label="Close image"
      >
        ×
      </button>
    </div>
  );
}
