/**
 * The one modal dialog of the page: a backdrop, a labelled `role="dialog"` box with its title and
 * a close button, and the keyboard rules every dialog shares. Tab and Shift+Tab stay inside the
 * dialog, focus that leaves it (a click on the page behind, a script) is brought back, Escape or
 * a click on the backdrop closes it, and on close the focus returns to what had it before.
 * Dialogs may nest (a confirmation over a form): only the top one answers keys. On a phone the
 * dialog takes the whole screen (styles.css, `.dialog`), and its body scrolls under a fixed head.
 *
 * Use it for every modal; put the form or tabs in `children`, actions in a `.dialog-actions` row.
 */
import { useEffect, useId, useRef, type ReactNode } from 'react';

/** Open dialogs, oldest first: only the last one handles keys and keeps the focus. */
const openDialogs: HTMLElement[] = [];

const FOCUSABLE = [
  'a[href]',
  'button:not([disabled])',
  'input:not([disabled]):not([type="hidden"])',
  'select:not([disabled])',
  'textarea:not([disabled])',
  '[tabindex]:not([tabindex="-1"])',
  '[contenteditable="true"]',
].join(', ');

/** The controls Tab can reach inside `root`, in order, leaving out hidden ones. */
export function focusableIn(root: HTMLElement): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
    (element) =>
      !element.closest('[hidden], [inert], fieldset[disabled]') && element.getClientRects().length > 0,
  );
}

export function Dialog({
  title,
  onClose,
  children,
  testId,
  wide = false,
  describedBy,
  initialFocus,
}: {
  /** The heading; it also names the dialog for assistive technology. */
  title: ReactNode;
  onClose: () => void;
  children: ReactNode;
  testId?: string;
  /** Wider than a form (tabs, tables); a phone shows every dialog full-screen anyway. */
  wide?: boolean;
  /** The id of a paragraph that describes the dialog, if any. */
  describedBy?: string;
  /**
   * A CSS selector, inside the dialog, of what gets the focus first. Default: the first field
   * (input, select, textarea), else the first control after the close button, else the dialog.
   */
  initialFocus?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const titleId = useId();
  // The latest onClose, so a parent that passes a new function each render neither re-runs the
  // focus effect (which would steal the focus back to the first field) nor closes a stale state.
  const close = useRef(onClose);
  close.current = onClose;

  useEffect(() => {
    const dialog = box.current;
    if (!dialog) return;
    const previous = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    openDialogs.push(dialog);
    const firstControl = () =>
      (initialFocus ? dialog.querySelector<HTMLElement>(initialFocus) : null) ??
      focusableIn(dialog).find((element) => element.matches('input, select, textarea')) ??
      focusableIn(dialog).find((element) => !element.matches('.dialog-close'));
    (firstControl() ?? dialog).focus();
    // Content that loads after the dialog opens (a form waiting for the box) gets the focus when
    // it comes, as long as the user has not moved it.
    const arrival = new MutationObserver(() => {
      if (document.activeElement !== dialog) return arrival.disconnect();
      const control = firstControl();
      if (control) {
        control.focus();
        arrival.disconnect();
      }
    });
    if (document.activeElement === dialog) arrival.observe(dialog, { childList: true, subtree: true });

    const onKey = (event: KeyboardEvent) => {
      if (openDialogs.at(-1) !== dialog) return;
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        close.current();
        return;
      }
      if (event.key !== 'Tab') return;
      const controls = focusableIn(dialog);
      if (controls.length === 0) {
        event.preventDefault();
        dialog.focus();
        return;
      }
      const head = controls[0]!;
      const tail = controls.at(-1)!;
      const active = document.activeElement;
      if (event.shiftKey && (active === head || active === dialog || !dialog.contains(active))) {
        event.preventDefault();
        tail.focus();
      } else if (!event.shiftKey && (active === tail || !dialog.contains(active))) {
        event.preventDefault();
        head.focus();
      }
    };
    const onFocusIn = (event: FocusEvent) => {
      if (openDialogs.at(-1) !== dialog) return;
      if (event.target instanceof Node && !dialog.contains(event.target)) {
        (focusableIn(dialog)[0] ?? dialog).focus();
      }
    };
    document.addEventListener('keydown', onKey, true);
    document.addEventListener('focusin', onFocusIn);
    const scroll = document.body.style.overflow;
    document.body.style.overflow = 'hidden';
    return () => {
      arrival.disconnect();
      document.removeEventListener('keydown', onKey, true);
      document.removeEventListener('focusin', onFocusIn);
      openDialogs.splice(openDialogs.indexOf(dialog), 1);
      document.body.style.overflow = scroll;
      // Back to where the user was, unless that is gone (a deleted row) or inside another dialog
      // that closed meanwhile.
      if (previous?.isConnected) previous.focus();
    };
    // Once per dialog: initialFocus is read when it opens, onClose through the ref.
  }, []);

  return (
    <div
      className="dialog-backdrop"
      onMouseDown={(event) => {
        // mousedown, not click: a text selection dragged out of a field must not close the form.
        if (event.target === event.currentTarget) close.current();
      }}
    >
      <div
        ref={box}
        className={`dialog${wide ? ' dialog-wide' : ''}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        {...(describedBy ? { 'aria-describedby': describedBy } : {})}
        tabIndex={-1}
        data-testid={testId}
      >
        <div className="dialog-head">
          <h2 id={titleId}>{title}</h2>
          <button
            type="button"
            className="dialog-close"
            aria-label="Close"
            title="Close (Esc)"
            onClick={() => close.current()}
          >
            ×
          </button>
        </div>
        <div className="dialog-body">{children}</div>
      </div>
    </div>
  );
}
