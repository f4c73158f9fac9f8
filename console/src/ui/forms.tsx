// Form controls with their labels wired up (every control has a visible <label>), hints and
// per-field errors announced to screen readers, and a submit button that shows it is busy.

import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

export interface FieldProps {
  label: string;
  hint?: string | undefined;
  error?: string | undefined;
  children: (id: string, describedBy: string | undefined) => ComponentChildren;
}

export function Field({ label, hint, error, children }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class={error ? 'field field-error' : 'field'}>
      <label for={id}>{label}</label>
      {children(id, describedBy)}
      {hint ? (
        <small id={hintId} class="hint">
          {hint}
        </small>
      ) : null}
      {error ? (
        <small id={errorId} class="error-text" role="alert">
          {error}
        </small>
      ) : null}
    </div>
  );
}

interface InputAttrs {
  type?: 'text' | 'password' | 'number' | 'datetime-local' | 'search';
  name?: string;
  autocomplete?: string;
  placeholder?: string;
  required?: boolean;
  min?: number;
  max?: number;
}

export function TextField(
  props: {
    label: string;
    value: string;
    onValue: (value: string) => void;
    hint?: string | undefined;
    error?: string | undefined;
  } & InputAttrs,
) {
  const { label, value, onValue, hint, error, type, name, autocomplete, placeholder, required, min, max } =
    props;
  // Preact types `type` as a union keyed by its value; one member is enough for the check.
  const inputType = (type ?? 'text') as string as 'text';
  return (
    <Field label={label} {...(hint ? { hint } : {})} error={error}>
      {(id, describedBy) => (
        <input
          type={inputType}
          name={name}
          autocomplete={autocomplete}
          placeholder={placeholder}
          required={required}
          min={min}
          max={max}
          id={id}
          value={value}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
          onInput={(e) => onValue((e.target as HTMLInputElement).value)}
        />
      )}
    </Field>
  );
}

export function TextArea(props: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  hint?: string | undefined;
  error?: string | undefined;
  rows?: number;
  name?: string;
}) {
  const { label, value, onValue, hint, error, rows, name } = props;
  return (
    <Field label={label} {...(hint ? { hint } : {})} error={error}>
      {(id, describedBy) => (
        <textarea
          id={id}
          name={name}
          rows={rows ?? 6}
          spellcheck={false}
          value={value}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
          onInput={(e) => onValue((e.target as HTMLTextAreaElement).value)}
        />
      )}
    </Field>
  );
}

export function SelectField(props: {
  label: string;
  value: string;
  options: readonly (string | { value: string; label: string })[];
  onValue: (value: string) => void;
  hint?: string | undefined;
  name?: string;
}) {
  const { label, value, options, onValue, hint, name } = props;
  return (
    <Field label={label} {...(hint ? { hint } : {})}>
      {(id, describedBy) => (
        <select
          id={id}
          name={name}
          value={value}
          aria-describedby={describedBy}
          onChange={(e) => onValue((e.target as HTMLSelectElement).value)}
        >
          {options.map((o) => {
            const opt = typeof o === 'string' ? { value: o, label: o } : o;
            return (
              <option key={opt.value} value={opt.value}>
                {opt.label}
              </option>
            );
          })}
        </select>
      )}
    </Field>
  );
}

export function Checkbox(props: { label: string; checked: boolean; onValue: (checked: boolean) => void }) {
  const id = useId();
  return (
    <div class="field field-check">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        onChange={(e) => props.onValue((e.target as HTMLInputElement).checked)}
      />
      <label for={id}>{props.label}</label>
    </div>
  );
}

/** A form that never navigates: submit calls `onSubmit`; the button is disabled while busy. */
export function Form(props: {
  label: string;
  onSubmit: () => void | Promise<void>;
  submitLabel: string;
  busy?: boolean;
  children: ComponentChildren;
}) {
  return (
    <form
      class="form"
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSubmit();
      }}
    >
      {props.children}
      <div class="form-actions">
        <button type="submit" class="primary" disabled={props.busy} aria-busy={props.busy ? true : undefined}>
          {props.busy ? 'Working…' : props.submitLabel}
        </button>
      </div>
    </form>
  );
}

/** Parses JSON typed into a form; the error message says where it broke. */
export function parseJsonInput(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: false, error: 'Enter a JSON value.' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: `Not valid JSON: ${(error as Error).message}` };
  }
}
