// A modal confirmation: the browser's <dialog> (showModal keeps the focus inside, Escape
// cancels, the page behind is inert), a title, what will happen, and Cancel / the action.

import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  confirmLabel: string;
  /** The action cannot be taken yet (the button says why through the dialog's text). */
  confirmDisabled?: boolean;
  busy?: boolean;
  onConfirm: () => void | Promise<void>;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        props.onCancel();
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          void props.onConfirm();
        }}
      >
        <h2 id={titleId}>{props.title}</h2>
        {props.open ? props.children : null}
        <div class="form-actions">
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
          <button
            type="submit"
            class="danger"
            disabled={props.confirmDisabled || props.busy}
            aria-busy={props.busy ? true : undefined}
          >
            {props.busy ? 'Working…' : props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
