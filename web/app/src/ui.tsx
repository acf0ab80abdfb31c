// The client's shared pieces: page frame, form fields, errors as the server said them,
// times in the viewer's zone with the event's beside them, countdowns, downloads.
// Pages put their own helpers in their own files; what two pages share moves here.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import type { ApiError } from './api';

export function useTitle(title: string) {
  useEffect(() => {
    document.title = title ? `${title} · Verdict` : 'Verdict';
  }, [title]);
}

/** A page: its title is the document's title and its one <h1>. */
export function Page({ title, children, actions }: { title: string; children?: ComponentChildren; actions?: ComponentChildren }) {
  useTitle(title);
  return (
    <section class="page">
      <header class="page-head">
        <h1>{title}</h1>
        {actions && <div class="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

/** A refusal exactly as the server said it, with its code (e.g. WINDOW_CLOSED). */
export function ErrorNote({ error }: { error: ApiError | undefined | null }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      <span class="code">{error.code}</span> {error.message}
    </p>
  );
}

/** A confirmation after an action, announced to screen readers. */
export function Notice({ children }: { children?: ComponentChildren }) {
  if (!children) return null;
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

type InputProps = Omit<JSX.IntrinsicElements['input'], 'onInput' | 'value' | 'label'> & {
  label: string;
  hint?: ComponentChildren;
  value: string;
  onValue: (v: string) => void;
};

/** A labelled input; the hint is tied to it with aria-describedby. */
export function Field({ label, hint, value, onValue, ...rest }: InputProps) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} value={value} onInput={(e) => onValue(e.currentTarget.value)} aria-describedby={hint ? `${id}-hint` : undefined} {...rest} />
      {hint && (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

type AreaProps = Omit<JSX.IntrinsicElements['textarea'], 'onInput' | 'value' | 'label'> & {
  label: string;
  hint?: ComponentChildren;
  value: string;
  onValue: (v: string) => void;
};

export function TextArea({ label, hint, value, onValue, ...rest }: AreaProps) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} value={value} onInput={(e) => onValue(e.currentTarget.value)} aria-describedby={hint ? `${id}-hint` : undefined} {...rest} />
      {hint && (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      )}
    </div>
  );
}

type SelectProps = Omit<JSX.IntrinsicElements['select'], 'onInput' | 'value' | 'onChange' | 'label'> & {
  label: string;
  value: string;
  onValue: (v: string) => void;
  options: { value: string; label: string }[];
};

export function Select({ label, value, onValue, options, ...rest }: SelectProps) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue(e.currentTarget.value)} {...rest}>
        {options.map((o) => (
          <option value={o.value}>{o.label}</option>
        ))}
      </select>
    </div>
  );
}

const viewerZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

function fmt(d: Date, zone: string) {
  // dateStyle/timeStyle cannot be combined with timeZoneName: spell the parts out.
  return new Intl.DateTimeFormat(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone: zone,
    timeZoneName: 'short',
  }).format(d);
}

/** A moment in the viewer's time zone, with the event's zone beside it when it differs
 *  (events keep their times in UTC unless they name a zone). */
export function When({ at, zone = 'UTC' }: { at: string | null | undefined; zone?: string }) {
  if (!at) return <span class="muted">not set</span>;
  const d = new Date(at);
  const local = fmt(d, viewerZone);
  const theirs = fmt(d, zone);
  return (
    <time dateTime={at} title={at}>
      {local}
      {theirs !== local && <span class="muted"> ({theirs})</span>}
    </time>
  );
}

function useNow(everyMs = 1000) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}

/** "2 d 03 h 12 min" until `to`, ticking; "closed" after it. */
export function Countdown({ to, closed = 'closed' }: { to: string; closed?: string }) {
  const now = useNow();
  const left = Math.floor((new Date(to).getTime() - now) / 1000);
  if (left <= 0) return <span class="countdown done">{closed}</span>;
  const d = Math.floor(left / 86400);
  const h = Math.floor((left % 86400) / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = left % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  const text = d > 0 ? `${d} d ${two(h)} h ${two(m)} min` : h > 0 ? `${h} h ${two(m)} min ${two(s)} s` : `${m} min ${two(s)} s`;
  return (
    <span class="countdown" role="timer" aria-live="off">
      {text}
    </span>
  );
}

/** Whether `now` lies in the half-open window [open, close). */
export function isOpen(open: string | null | undefined, close: string | null | undefined, now = Date.now()) {
  return !!open && !!close && new Date(open).getTime() <= now && now < new Date(close).getTime();
}

/** Offers `text` as a file download (exports). */
export function download(filename: string, text: string, type = 'text/csv;charset=utf-8') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function Badge({ children, tone = 'plain' }: { children?: ComponentChildren; tone?: 'plain' | 'good' | 'warn' | 'bad' }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

/** A table that scrolls sideways on a phone instead of squeezing its columns. */
export function Table({ caption, children }: { caption?: string; children?: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={caption ?? 'table'}>
      <table>
        {caption && <caption>{caption}</caption>}
        {children}
      </table>
    </div>
  );
}

/** A link a person typed (a project's repo or demo) as a URL to link to: only http(s),
 *  never `javascript:` or `data:`; null otherwise. */
export function safeUrl(u: string | null | undefined): string | null {
  if (!u) return null;
  try {
    const p = new URL(u);
    return p.protocol === 'http:' || p.protocol === 'https:' ? p.href : null;
  } catch {
    return null;
  }
}

/** Copies `text` to the clipboard; says so, or asks to copy by hand when it cannot. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [said, setSaid] = useState('');
  return (
    <span class="copy">
      <button
        type="button"
        class="secondary"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(text);
            setSaid('Copied.');
          } catch {
            setSaid('Could not copy: select the text and copy it by hand.');
          }
        }}
      >
        {label}
      </button>
      <span class="muted" role="status" aria-live="polite">
        {said}
      </span>
    </span>
  );
}
