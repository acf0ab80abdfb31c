// The client's shared pieces: page frame, form fields, refusals as sentences beside the
// field they name, times in the viewer's zone with the event's beside them, countdowns,
// downloads. Pages put their own helpers in their own files; what two pages share moves here.
import { createContext, type ComponentChildren, type JSX } from 'preact';
import { useContext, useEffect, useId, useRef, useState } from 'preact/hooks';
import { humanError, type ApiError } from './api';
import { useSession } from './session';

/** The name of the event the current page belongs to (set by the frame for `/e/:slug`
 *  pages), so every title names it: "Settings · Spring Hack · Verdict". */
export const EventNameContext = createContext<string | null>(null);

export function useTitle(title: string) {
  const event = useContext(EventNameContext);
  useEffect(() => {
    document.title = [title, event && event !== title ? event : null, 'Verdict'].filter(Boolean).join(' · ');
  }, [title, event]);
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

/** A refusal as a sentence a person understands ([`humanError`]); the contract's code
 *  stays in `data-code` for scripts, out of sight. When the refusal names a field of the
 *  form around it ([`FormErrors`]), that field shows it too, beside itself. */
export function ErrorNote({ error }: { error: ApiError | undefined | null }) {
  const labels = useContext(FormErrorContext).labels;
  if (!error) return null;
  // Outside a form's FormErrors the field is named as the server names it ("Max team size").
  return (
    <p class="error" role="alert" data-code={error.code}>
      {humanError(error, error.field ? labels?.get(error.field) : undefined)}
    </p>
  );
}

type FormErrorState = { error: ApiError | undefined | null; labels: Map<string, string> | null };
const FormErrorContext = createContext<FormErrorState>({ error: null, labels: null });

/** Hands a form's refusal to its fields: the [`Field`], [`TextArea`] or [`Select`] whose
 *  `name` is the field a BAD_USER_INPUT names shows the sentence beside itself, marked
 *  invalid (error summary plus inline message, as GOV.UK forms do). */
export function FormErrors({ error, children }: { error: ApiError | undefined | null; children?: ComponentChildren }) {
  // Fields register their labels while rendering, so the summary says "Title", not "title".
  const [labels] = useState(() => new Map<string, string>());
  return <FormErrorContext.Provider value={{ error, labels }}>{children}</FormErrorContext.Provider>;
}

/** The sentence for the field `name` (labelled `label`), when the form's refusal names it. */
function useFieldError(name: string | undefined, label: string): string | null {
  const { error, labels } = useContext(FormErrorContext);
  if (!name || !labels) return null;
  labels.set(name, label);
  return error && error.field === name ? humanError(error, label) : null;
}

/** What ties an input to its hint and its error (`aria-describedby`, `aria-invalid`),
 *  kept with what the caller set itself. */
function described(id: string, hint: unknown, error: string | null, rest: Record<string, unknown>) {
  const ids = [rest['aria-describedby'], hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return { 'aria-describedby': ids || undefined, 'aria-invalid': error ? true : (rest['aria-invalid'] as boolean | undefined) };
}

function FieldError({ id, error }: { id: string; error: string | null }) {
  if (!error) return null;
  return (
    <small id={`${id}-error`} class="field-error">
      {error}
    </small>
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
  const error = useFieldError(rest.name as string | undefined, label);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} value={value} onInput={(e) => onValue(e.currentTarget.value)} {...rest} {...described(id, hint, error, rest)} />
      {hint && (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      )}
      <FieldError id={id} error={error} />
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
  const error = useFieldError(rest.name as string | undefined, label);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} value={value} onInput={(e) => onValue(e.currentTarget.value)} {...rest} {...described(id, hint, error, rest)} />
      {hint && (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      )}
      <FieldError id={id} error={error} />
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
  const error = useFieldError(rest.name as string | undefined, label);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue(e.currentTarget.value)} {...rest} {...described(id, null, error, rest)}>
        {options.map((o) => (
          <option value={o.value}>{o.label}</option>
        ))}
      </select>
      <FieldError id={id} error={error} />
    </div>
  );
}

const viewerZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

function fmt(d: Date, zone: string, named = true) {
  // dateStyle/timeStyle cannot be combined with timeZoneName: spell the parts out.
  try {
    return new Intl.DateTimeFormat(undefined, {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZone: zone,
      timeZoneName: named ? 'short' : undefined,
    }).format(d);
  } catch {
    return fmt(d, 'UTC', named); // a zone this browser does not know
  }
}

/** A moment once, in the viewer's time zone. With `zone` (an event's deadline or window:
 *  events keep UTC unless they name a zone), the event's time beside it only when the
 *  event's clock reads differently (the same wall-clock time under another name, "GMT" and
 *  "UTC", is shown once). Without `zone` (when something happened) only the viewer's. */
export function When({ at, zone }: { at: string | null | undefined; zone?: string | null }) {
  if (!at) return <span class="muted">not set</span>;
  const d = new Date(at);
  const theirZone = zone === undefined ? viewerZone : zone || 'UTC';
  const differs = fmt(d, viewerZone, false) !== fmt(d, theirZone, false);
  return (
    <time dateTime={at} title={at}>
      {fmt(d, viewerZone)}
      {differs && <span class="muted"> ({fmt(d, theirZone)})</span>}
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

/**
 * How long until `to`, from `now`: exactly ("2 d 03 h 12 min", seconds within the last
 * hour) or, `rough`, as a sentence says it ("15 min", "47 h", "3 days"); null once passed.
 */
export function timeLeft(to: string, now = Date.now(), rough = false): string | null {
  const left = Math.floor((new Date(to).getTime() - now) / 1000);
  if (left <= 0) return null;
  if (rough) {
    const min = Math.round(left / 60);
    if (min < 90) return `${min} min`;
    const h = Math.round(min / 60);
    return h < 48 ? `${h} h` : `${Math.round(h / 24)} days`;
  }
  const d = Math.floor(left / 86400);
  const h = Math.floor((left % 86400) / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = left % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  return d > 0 ? `${d} d ${two(h)} h ${two(m)} min` : h > 0 ? `${h} h ${two(m)} min ${two(s)} s` : `${m} min ${two(s)} s`;
}

/** [`timeLeft`] until `to`, ticking (every second, or every half minute when `rough`);
 *  `closed` after it. */
export function Countdown({ to, closed = 'closed', rough = false }: { to: string; closed?: string; rough?: boolean }) {
  const now = useNow(rough ? 30_000 : 1000);
  const text = timeLeft(to, now, rough);
  if (text === null) return <span class="countdown done">{closed}</span>;
  return (
    <span class={rough ? undefined : 'countdown'} role="timer" aria-live="off">
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

/** A hash or signature in monospace: whole, or its first `length` characters with the
 *  whole of it in the tooltip and for screen readers. */
export function Hash({ value, length }: { value: string; length?: number }) {
  const short = length != null && value.length > length;
  return (
    <code class={short ? 'hash short' : 'hash'} title={short ? value : undefined}>
      {short ? (
        <>
          {value.slice(0, length)}…<span class="visually-hidden"> (full value: {value})</span>
        </>
      ) : (
        value
      )}
    </code>
  );
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

function readDraft(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function writeDraft(key: string, text: string | null) {
  try {
    if (text === null) localStorage.removeItem(key);
    else localStorage.setItem(key, text);
  } catch {
    // Storage full or refused (private mode): the guard on leaving still warns.
  }
}

export type Draft = { restored: boolean; discard: () => void; clear: () => void };

/**
 * Keeps a form's unsaved text in this browser (localStorage, keyed by the signed-in user
 * and `what`, e.g. `project.prj_1`) so a reload or a crash loses nothing: restored once on
 * mount when it differs from what the server has (`restored` says so), dropped as soon as
 * the form equals what is saved again (after a save), or by `discard`/`clear`.
 */
export function useDraft<T>(what: string, current: T, saved: T, restore: (draft: T) => void): Draft {
  const { viewer } = useSession();
  const key = viewer ? `verdict.draft.${viewer.user.id}.${what}` : null;
  const [restored, setRestored] = useState(false);
  const text = JSON.stringify(current);
  const savedText = JSON.stringify(saved);
  useEffect(() => {
    if (!key) return;
    const raw = readDraft(key);
    if (raw === null || raw === savedText) return;
    try {
      restore(JSON.parse(raw) as T);
      setRestored(true);
    } catch {
      writeDraft(key, null);
    }
    // Restored once per form: later changes of `saved` are the server's, not a reload.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  useEffect(() => {
    if (!key) return;
    writeDraft(key, text === savedText ? null : text);
  }, [key, text, savedText]);
  return {
    restored: restored && text !== savedText,
    discard: () => {
      if (key) writeDraft(key, null);
      restore(saved);
      setRestored(false);
    },
    clear: () => {
      if (key) writeDraft(key, null);
      setRestored(false);
    },
  };
}

/** Says a form came back from a draft in this browser, with a way to drop it. */
export function DraftNote({ draft }: { draft: Draft }) {
  if (!draft.restored) return null;
  return (
    <p class="notice draft-note" role="status">
      We restored your unsaved changes from this browser.{' '}
      <button type="button" class="link" onClick={draft.discard}>
        Discard them
      </button>
    </p>
  );
}

/**
 * A destructive or final action in two steps, the one way the client asks "are you sure":
 * the action's button, then in its place the question (if any; it names the group unless
 * `groupLabel` does), a refusal beside it, a "Yes, …" button (focused) and a way back.
 * `onYes` runs the action; the question closes when it settles, unless it returns `false`.
 */
export function Confirm({
  action,
  actionLabel,
  primary = false,
  yes,
  yesLabel,
  yesTone = 'danger',
  no = 'Cancel',
  question,
  groupLabel,
  error,
  busy = false,
  onAsk,
  onNo,
  onYes,
  class: cls = 'actions',
}: {
  action: ComponentChildren;
  actionLabel?: string;
  /** The action's button is the page's main one, not a secondary one. */
  primary?: boolean;
  yes: ComponentChildren;
  yesLabel?: string;
  /** `plain` for an action that is final but not destructive. */
  yesTone?: 'danger' | 'plain';
  no?: string;
  question?: ComponentChildren;
  groupLabel?: string;
  error?: ApiError | null;
  busy?: boolean;
  onAsk?: () => void;
  onNo?: () => void;
  onYes: () => unknown;
  class?: string;
}) {
  const [asking, setAsking] = useState(false);
  const yesRef = useRef<HTMLButtonElement>(null);
  const questionId = useId();
  useEffect(() => {
    if (asking) yesRef.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button type="button" class={primary ? undefined : 'secondary'} aria-label={actionLabel} onClick={() => (onAsk?.(), setAsking(true))}>
        {action}
      </button>
    );
  return (
    <div class={`confirm ${cls}`} role="group" aria-label={groupLabel} aria-labelledby={!groupLabel && question ? questionId : undefined}>
      {question && <p id={questionId}>{question}</p>}
      <ErrorNote error={error} />
      <div class="actions">
        <button
          ref={yesRef}
          type="button"
          class={yesTone === 'danger' ? 'danger' : undefined}
          disabled={busy}
          aria-label={yesLabel}
          onClick={async () => {
            // `false` keeps the question open (the action was refused: try again or back out).
            if ((await onYes()) !== false) setAsking(false);
          }}
        >
          {yes}
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => (onNo?.(), setAsking(false))}>
          {no}
        </button>
      </div>
    </div>
  );
}
