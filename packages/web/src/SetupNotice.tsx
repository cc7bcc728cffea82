/**
 * The "no model" notice: one line with the steps behind a toggle, dismissible (remembered for
 * this browser until a model is configured, when the notice has nothing left to say).
 */
import { useId, useState } from 'react';
import type { ModelStatus } from './api/types.ts';

const DISMISSED_KEY = 'sendbox.setupNoticeDismissed';

function wasDismissed(): boolean {
  try {
    return localStorage.getItem(DISMISSED_KEY) === '1';
  } catch {
    return false;
  }
}

export function SetupNotice({ model, onOpenSettings }: { model: ModelStatus; onOpenSettings?: () => void }) {
  const [dismissed, setDismissed] = useState(wasDismissed);
  const [open, setOpen] = useState(false);
  const detailsId = useId();
  if (dismissed) return null;
  return (
    <section className="banner setup-notice" aria-label="Model setup" data-testid="model-banner">
      <div className="banner-line">
        <strong>
          No model set up<span className="banner-rest">: agents are read-only</span>
        </strong>
        {onOpenSettings && (
          <button
            type="button"
            className="link-button"
            onClick={onOpenSettings}
            data-testid="banner-settings"
          >
            Set up
          </button>
        )}
        <button
          type="button"
          className="link-button"
          aria-expanded={open}
          aria-controls={detailsId}
          onClick={() => setOpen((value) => !value)}
          data-testid="banner-details"
        >
          {open ? 'Hide details' : 'Details'}
        </button>
        <button
          type="button"
          className="banner-close"
          aria-label="Dismiss the model setup notice"
          onClick={() => {
            setDismissed(true);
            try {
              localStorage.setItem(DISMISSED_KEY, '1');
            } catch {
              // Storage disabled: dismissed for this visit only.
            }
          }}
          data-testid="banner-dismiss"
        >
          ×
        </button>
      </div>
      <pre id={detailsId} hidden={!open} data-testid="banner-steps">
        {model.howToConfigure}
      </pre>
    </section>
  );
}
