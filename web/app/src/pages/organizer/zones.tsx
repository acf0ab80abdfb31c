// Time zones for the organizer's forms (settings, new event, community vote).
// Organizers think in their event's local time, so the window inputs are read and written
// in the event's zone (not the viewer's). No library: the zone's offset at an instant comes
// from Intl.DateTimeFormat#formatToParts.
import { useMemo } from 'preact/hooks';
import { Field } from '../../ui';

export const viewerZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

function zoneNames(): string[] {
  let names: string[] = [];
  try {
    names = Intl.supportedValuesOf('timeZone');
  } catch {
    names = [];
  }
  return names.includes('UTC') ? names : ['UTC', ...names];
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function partsFormatter(zone: string) {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall clock in `zone` at the instant `ms`, as UTC fields. */
function wallClock(zone: string, ms: number) {
  const parts = partsFormatter(zone).formatToParts(new Date(ms));
  const get = (t: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return { y: get('year'), mo: get('month'), d: get('day'), h: get('hour') % 24, mi: get('minute'), s: get('second') };
}

/** How far `zone`'s wall clock is ahead of UTC at the instant `ms`, in milliseconds. */
export function zoneOffsetMs(zone: string, ms: number): number {
  const w = wallClock(zone, ms);
  const asUtc = Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s);
  return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
}

/** Whether the browser knows `zone` as a time zone name. */
export function isZone(zone: string): boolean {
  if (!zone.trim()) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone.trim() });
    return true;
  } catch {
    return false;
  }
}

/** The zone name as the tz database spells it when only its case differs ("asia/tokyo"). */
export function canonicalZone(zone: string): string {
  const z = zone.trim();
  if (!isZone(z)) return z;
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: z }).resolvedOptions().timeZone;
  return resolved.toLowerCase() === z.toLowerCase() ? resolved : z;
}

/** An ISO instant as a `datetime-local` value on `zone`'s wall clock ('' when unset). */
export function toZoneInput(iso: string | null | undefined, zone: string): string {
  if (!iso) return '';
  const ms = new Date(iso).getTime();
  if (Number.isNaN(ms)) return '';
  const w = wallClock(zone, ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${String(w.y).padStart(4, '0')}-${two(w.mo)}-${two(w.d)}T${two(w.h)}:${two(w.mi)}`;
}

/** A `datetime-local` value read on `zone`'s wall clock as an ISO instant; null when empty. */
export function fromZoneInput(v: string, zone: string): string | null {
  const m = /^(\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(v.trim());
  if (!m) return null;
  const wall = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] ?? 0));
  if (Number.isNaN(wall)) return null;
  // Guess with the offset at the wall time read as UTC, then once more with the offset at
  // the guess: that settles instants near a daylight-saving change.
  const first = wall - zoneOffsetMs(zone, wall);
  const second = zoneOffsetMs(zone, first);
  const at = wall - second;
  return new Date(at).toISOString();
}

/** The same instant re-expressed on another zone's wall clock (keeps '' and unparsable text). */
export function moveZone(v: string, from: string, to: string): string {
  const iso = fromZoneInput(v, from);
  return iso ? toZoneInput(iso, to) : v;
}

/** Two ISO instants (or nothing) name the same moment. */
export function sameInstant(a: string | null | undefined, b: string | null | undefined) {
  if (!a || !b) return !a && !b;
  return new Date(a).getTime() === new Date(b).getTime();
}

export function ZoneNote({ zone, id }: { zone: string; id?: string }) {
  return (
    <p class="muted" id={id}>
      Times below are in the event&rsquo;s time zone, <strong>{zone}</strong>
      {zone !== viewerZone && <> (yours is {viewerZone})</>}; Verdict keeps them as instants.
    </p>
  );
}

/** The time zone input with the browser's list of zone names to pick from. */
export function ZoneField({ value, onValue, hint }: { value: string; onValue: (v: string) => void; hint?: string }) {
  const names = useMemo(zoneNames, []);
  const valid = isZone(value);
  return (
    <>
      <Field
        label="Time zone"
        name="timeZone"
        hint={!valid && value.trim() ? `${value.trim()} is not a time zone this browser knows; pick one from the list.` : (hint ?? 'An IANA name such as Europe/Berlin.')}
        list="org-zones"
        required
        autoComplete="off"
        spellcheck={false}
        value={value}
        onValue={onValue}
        aria-invalid={!valid && value.trim() ? true : undefined}
      />
      <datalist id="org-zones">
        {names.map((n) => (
          <option key={n} value={n} />
        ))}
      </datalist>
    </>
  );
}

