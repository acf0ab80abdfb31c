// The organizer's event set-up: a new event (or one imported from a fixture), its
// settings and windows, its tracks and its rubric.
import { useEffect, useState } from 'preact/hooks';
import { useMutation, useQuery } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { Link, navigate } from '../../router';
import { useSession } from '../../session';
import { Badge, Confirm, ErrorNote, Field, FormErrors, Loading, Notice, Page, Select, Table, TextArea, When } from '../../ui';
import { OrgPage } from './nav';
import './organizer-admin.css';
import { TrackActions } from './tracks';
import { canonicalZone, fromZoneInput, isZone, moveZone, sameInstant, toZoneInput, viewerZone, ZoneField, ZoneNote } from './zones';

const REGISTRATION_OPTIONS = [
  { value: 'OPEN', label: 'Open: anyone signed in may register' },
  { value: 'INVITE_ONLY', label: 'Invite only: participants join by invitation' },
  { value: 'CLOSED', label: 'Closed: nobody new registers' },
];
const REGISTRATION_LABEL: Record<string, string> = { OPEN: 'Open', INVITE_ONLY: 'Invite only', CLOSED: 'Closed' };
type Registration = 'OPEN' | 'INVITE_ONLY' | 'CLOSED';

function int(v: string): number | null {
  const n = Number(v);
  return v.trim() !== '' && Number.isInteger(n) ? n : null;
}

// ---- /new-event ----------------------------------------------------------------------

const CreateEvent = graphql(`
  mutation CreateEvent($input: CreateEventInput!) {
    createEvent(input: $input) { id slug }
  }
`);

const ImportEvent = graphql(`
  mutation ImportEvent($fixture: JSON!) {
    importEvent(fixture: $fixture) { inserted counts event { id slug name } }
  }
`);

function slugify(name: string) {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
}

export function NewEventPage() {
  const { viewer, loading } = useSession();
  if (loading) return <Page title="New event"><Loading /></Page>;
  if (!viewer)
    return (
      <Page title="New event">
        <p>
          <Link href="/login?next=/new-event">Log in</Link> as a site administrator to create an event.
        </p>
      </Page>
    );
  if (!viewer.user.isSiteAdmin)
    return (
      <Page title="New event">
        <p>Only site administrators create events. Ask yours to create one and make you its organizer.</p>
      </Page>
    );
  return (
    <Page title="New event">
      <CreateEventForm />
      <ImportForm />
    </Page>
  );
}

function CreateEventForm() {
  const { refresh } = useSession();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugTouched, setSlugTouched] = useState(false);
  const [subOpen, setSubOpen] = useState('');
  const [subClose, setSubClose] = useState('');
  const [judgeOpen, setJudgeOpen] = useState('');
  const [judgeClose, setJudgeClose] = useState('');
  const [reviews, setReviews] = useState('3');
  const [teamSize, setTeamSize] = useState('5');
  const [registration, setRegistration] = useState<Registration>('INVITE_ONLY');
  const [timeZone, setTimeZone] = useState(viewerZone);
  const m = useMutation(CreateEvent);
  // The windows are read on the chosen zone's clock (the viewer's while the name is unknown:
  // the server then refuses the name anyway).
  const at = isZone(timeZone) ? timeZone.trim() : viewerZone;
  return (
    <form
      class="narrow"
      aria-labelledby="create-h"
      onSubmit={async (e) => {
        e.preventDefault();
        const r = await m.run({
          input: {
            name: name.trim(),
            slug: slug.trim(),
            submissionsOpen: fromZoneInput(subOpen, at) ?? '',
            submissionsClose: fromZoneInput(subClose, at) ?? '',
            judgingOpen: fromZoneInput(judgeOpen, at),
            judgingClose: fromZoneInput(judgeClose, at),
            timeZone: canonicalZone(timeZone),
            reviewsPerProject: int(reviews),
            maxTeamSize: int(teamSize),
            registration,
          },
        });
        if (r) {
          await refresh();
          navigate(`/e/${encodeURIComponent(r.createEvent.slug)}/admin`);
        }
      }}
    >
      <h2 id="create-h">Create an event</h2>
      <FormErrors error={m.error}>
      <Field
        label="Name" name="name"
        required
        maxLength={200}
        value={name}
        onValue={(v) => {
          setName(v);
          if (!slugTouched) setSlug(slugify(v));
        }}
      />
      <Field
        label="Slug" name="slug"
        hint="The event's address: lower-case letters, digits and dashes."
        required
        pattern="[a-z0-9][a-z0-9\-]{0,63}"
        value={slug}
        onValue={(v) => {
          setSlugTouched(true);
          setSlug(v);
        }}
      />
      <ZoneField value={timeZone} onValue={setTimeZone} hint="Where the event happens; its times are shown in it. An IANA name such as Europe/Berlin." />
      <ZoneNote zone={at} />
      <fieldset class="org-fieldset">
        <legend>Submission window</legend>
        <div class="org-inline">
          <Field label="Submissions open" name="submissionsOpen" type="datetime-local" hint={`${at} time`} required value={subOpen} onValue={setSubOpen} />
          <Field label="Submissions close" name="submissionsClose" type="datetime-local" hint={`${at} time`} required value={subClose} onValue={setSubClose} />
        </div>
      </fieldset>
      <fieldset class="org-fieldset">
        <legend>Judging window (optional: both or neither)</legend>
        <div class="org-inline">
          <Field label="Judging opens" name="judgingOpen" type="datetime-local" hint={`${at} time`} value={judgeOpen} onValue={setJudgeOpen} />
          <Field label="Judging closes" name="judgingClose" type="datetime-local" hint={`${at} time`} value={judgeClose} onValue={setJudgeClose} />
        </div>
      </fieldset>
      <div class="org-inline">
        <Field label="Reviews per project" name="reviewsPerProject" type="number" min={1} required value={reviews} onValue={setReviews} />
        <Field label="Largest team" name="maxTeamSize" type="number" min={1} required value={teamSize} onValue={setTeamSize} />
      </div>
      <Select label="Registration" name="registration" value={registration} onValue={(v) => setRegistration(v as Registration)} options={REGISTRATION_OPTIONS} />
      <ErrorNote error={m.error} />
      </FormErrors>
      <button type="submit" disabled={m.loading}>
        Create the event
      </button>
    </form>
  );
}

type ImportResult = NonNullable<ResultOf<typeof ImportEvent>['importEvent']>;

function ImportForm() {
  const { refresh } = useSession();
  const [file, setFile] = useState<File | null>(null);
  const [readError, setReadError] = useState('');
  const [report, setReport] = useState<ImportResult | null>(null);
  const m = useMutation(ImportEvent);
  return (
    <form
      class="narrow org-block"
      aria-labelledby="import-h"
      onSubmit={async (e) => {
        e.preventDefault();
        setReadError('');
        setReport(null);
        m.reset();
        if (!file) return;
        let fixture: unknown;
        try {
          fixture = JSON.parse(await file.text());
        } catch (err) {
          setReadError(`${file.name} is not JSON: ${(err as Error).message}`);
          return;
        }
        const r = await m.run({ fixture });
        if (r) {
          setReport(r.importEvent);
          await refresh();
        }
      }}
    >
      <h2 id="import-h">Import an event fixture</h2>
      <p class="muted">
        A <code>verdict.event.v1</code> JSON file: the event with its tracks, rubric, people, teams and projects. Importing the same file again changes nothing.
      </p>
      <div class="field">
        <label for="fixture-file">Fixture file</label>
        <input id="fixture-file" type="file" accept=".json,application/json" required onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
      </div>
      {readError && (
        <p class="error" role="alert">
          {readError}
        </p>
      )}
      <ErrorNote error={m.error} />
      <button type="submit" disabled={m.loading || !file}>
        Import
      </button>
      {report && (
        <div role="status" class="notice org-block">
          <p>
            {report.inserted === 0 ? 'This file had been imported before: nothing new was written.' : `Imported ${report.inserted} rows into `}
            <Link href={`/e/${encodeURIComponent(report.event.slug)}/admin`}>{report.event.name}</Link>.
          </p>
          <ImportCounts counts={report.counts} />
        </div>
      )}
    </form>
  );
}

function ImportCounts({ counts }: { counts: unknown }) {
  if (!counts || typeof counts !== 'object') return null;
  const entries = Object.entries(counts as Record<string, unknown>);
  if (!entries.length) return null;
  return (
    <ul class="org-counts">
      {entries.map(([k, v]) => (
        <li key={k}>
          <Badge>
            {k}: {String(v)}
          </Badge>
        </li>
      ))}
    </ul>
  );
}

// ---- /e/:slug/admin/settings ---------------------------------------------------------

const Settings = graphql(`
  query EventSettings($slug: String!) {
    event(slug: $slug) {
      id slug name registration reviewsPerProject maxTeamSize commentsToTeams
      submissionsOpen submissionsClose judgingOpen judgingClose votingOpen votingClose timeZone
    }
  }
`);

const UpdateEvent = graphql(`
  mutation UpdateEvent($event: String!, $input: UpdateEventInput!) {
    updateEvent(event: $event, input: $input) {
      id slug name registration reviewsPerProject maxTeamSize commentsToTeams
      submissionsOpen submissionsClose judgingOpen judgingClose votingOpen votingClose timeZone
    }
  }
`);

type EventSettings = NonNullable<ResultOf<typeof Settings>['event']>;

export function SettingsPage({ slug }: { slug: string }) {
  const { viewer } = useSession();
  const q = useQuery(Settings, { slug }, { skip: !viewer });
  const ev = q.data?.event;
  return (
    <OrgPage slug={slug} title="Settings">
      <ErrorNote error={q.error} />
      {q.loading && !q.data ? <Loading /> : q.data && !ev ? <p>There is no event {slug}.</p> : ev && <SettingsForm key={ev.id} ev={ev} onSaved={() => q.refetch()} />}
    </OrgPage>
  );
}

const WINDOWS: [keyof EventSettings & string, string][] = [
  ['submissionsOpen', 'Submissions open'],
  ['submissionsClose', 'Submissions close'],
  ['judgingOpen', 'Judging opens'],
  ['judgingClose', 'Judging closes'],
  ['votingOpen', 'Voting opens'],
  ['votingClose', 'Voting closes'],
];

function SettingsForm({ ev, onSaved }: { ev: EventSettings; onSaved: () => Promise<void> }) {
  const initial = () => ({
    name: ev.name,
    slug: ev.slug,
    registration: ev.registration as string,
    reviewsPerProject: String(ev.reviewsPerProject),
    maxTeamSize: String(ev.maxTeamSize),
    commentsToTeams: ev.commentsToTeams,
    timeZone: ev.timeZone,
    // The window inputs show the event's own clock.
    inputZone: ev.timeZone,
    ...Object.fromEntries(WINDOWS.map(([k]) => [k, toZoneInput(ev[k] as string | null, ev.timeZone)])),
  });
  const [form, setForm] = useState<Record<string, string | boolean>>(initial);
  const [done, setDone] = useState('');
  const m = useMutation(UpdateEvent);
  // After a save the server's values come back: start from them.
  useEffect(() => setForm(initial()), [ev]);
  const set = (k: string) => (v: string) => {
    setDone('');
    setForm((f) => ({ ...f, [k]: v }));
  };
  const str = (k: string) => String(form[k] ?? '');
  const inputZone = str('inputZone');
  // A new zone does not move the deadlines: the windows are re-read on its clock.
  const setZone = (v: string) => {
    setDone('');
    setForm((f) => {
      const next: Record<string, string | boolean> = { ...f, timeZone: v };
      const from = String(f.inputZone);
      const to = v.trim();
      if (isZone(to) && to !== from) {
        for (const [k] of WINDOWS) next[k] = moveZone(String(f[k] ?? ''), from, to);
        next.inputZone = to;
      }
      return next;
    });
  };

  return (
    <>
      <section aria-labelledby="current-h">
        <h2 id="current-h">Now</h2>
        <dl class="org-current">
          <dt>Name</dt>
          <dd>{ev.name}</dd>
          <dt>Slug</dt>
          <dd>
            <code>{ev.slug}</code>
          </dd>
          <dt>Registration</dt>
          <dd>{REGISTRATION_LABEL[ev.registration] ?? ev.registration}</dd>
          <dt>Reviews per project</dt>
          <dd>{ev.reviewsPerProject}</dd>
          <dt>Largest team</dt>
          <dd>{ev.maxTeamSize}</dd>
          <dt>Comments to teams</dt>
          <dd>{ev.commentsToTeams ? 'yes, once results are published' : 'no'}</dd>
          <dt>Time zone</dt>
          <dd>{ev.timeZone}</dd>
          {WINDOWS.map(([k, label]) => (
            <>
              <dt>{label}</dt>
              <dd>
                <When at={ev[k] as string | null} zone={ev.timeZone} />
              </dd>
            </>
          ))}
        </dl>
      </section>
      <form
        class="narrow"
        aria-labelledby="change-h"
        onSubmit={async (e) => {
          e.preventDefault();
          setDone('');
          // Only what changed goes to the server.
          const input: Record<string, unknown> = {};
          if (str('name').trim() !== ev.name) input.name = str('name').trim();
          if (str('slug').trim() !== ev.slug) input.slug = str('slug').trim();
          if (str('registration') !== ev.registration) input.registration = str('registration');
          if (str('reviewsPerProject') !== String(ev.reviewsPerProject)) input.reviewsPerProject = int(str('reviewsPerProject'));
          if (str('maxTeamSize') !== String(ev.maxTeamSize)) input.maxTeamSize = int(str('maxTeamSize'));
          if (form.commentsToTeams !== ev.commentsToTeams) input.commentsToTeams = form.commentsToTeams;
          if (str('timeZone').trim() !== ev.timeZone) input.timeZone = canonicalZone(str('timeZone'));
          for (const [k] of WINDOWS) {
            // Inputs show whole minutes: only a window whose text changed is sent. An emptied
            // window stays as it is.
            if (str(k) === toZoneInput(ev[k] as string | null, inputZone)) continue;
            const iso = fromZoneInput(str(k), inputZone);
            if (iso && !sameInstant(iso, ev[k] as string | null)) input[k] = iso;
          }
          if (Object.keys(input).length === 0) {
            setDone('Nothing changed.');
            return;
          }
          const r = await m.run({ event: ev.slug, input: input as never });
          if (r) {
            if (r.updateEvent.slug !== ev.slug) {
              navigate(`/e/${encodeURIComponent(r.updateEvent.slug)}/admin/settings`, { replace: true });
              return;
            }
            setDone('Saved.');
            await onSaved();
          }
        }}
      >
        <h2 id="change-h">Change</h2>
        <FormErrors error={m.error}>
        <Field label="Name" name="name" required maxLength={200} value={str('name')} onValue={set('name')} />
        <Field label="Slug" name="slug" hint="Changing it changes every address of the event." required value={str('slug')} onValue={set('slug')} />
        <Select label="Registration" name="registration" value={str('registration')} onValue={set('registration')} options={REGISTRATION_OPTIONS} />
        <div class="org-inline">
          <Field label="Reviews per project" name="reviewsPerProject" type="number" min={1} required value={str('reviewsPerProject')} onValue={set('reviewsPerProject')} />
          <Field label="Largest team" name="maxTeamSize" type="number" min={1} required value={str('maxTeamSize')} onValue={set('maxTeamSize')} />
        </div>
        <label class="org-check">
          <input
            type="checkbox"
            checked={!!form.commentsToTeams}
            onChange={(e) => {
              setDone('');
              setForm((f) => ({ ...f, commentsToTeams: e.currentTarget.checked }));
            }}
          />
          Teams read the judges&rsquo; comments on their project once results are published
        </label>
        <ZoneField value={str('timeZone')} onValue={setZone} hint="Its times are shown in it; changing it does not move the windows." />
        <ZoneNote zone={inputZone} />
        <fieldset class="org-fieldset">
          <legend>Windows</legend>
          <div class="org-inline">
            {WINDOWS.map(([k, label]) => (
              <Field label={label} name={k} type="datetime-local" hint={`${inputZone} time`} value={str(k)} onValue={set(k)} />
            ))}
          </div>
          <p class="muted">A window left empty stays as it is.</p>
        </fieldset>
        <ErrorNote error={m.error} />
        </FormErrors>
        <Notice>{done}</Notice>
        <button type="submit" disabled={m.loading}>
          Save settings
        </button>
      </form>
    </>
  );
}

// ---- /e/:slug/admin/tracks -----------------------------------------------------------

const TracksQuery = graphql(`
  query EventTracks($slug: String!) {
    event(slug: $slug) { id judgingMode judgingOpen tracks { id name externalId judgingMode } }
  }
`);

const SetJudgingMode = graphql(`
  mutation SetJudgingMode($event: String!, $mode: JudgingMode!, $track: ID) {
    setJudgingMode(event: $event, mode: $mode, track: $track) { id judgingMode tracks { id judgingMode } }
  }
`);

type Mode = 'SCORES' | 'PAIRWISE' | 'BOTH';
const MODES: { value: Mode; label: string }[] = [
  { value: 'SCORES', label: 'Rubric scores' },
  { value: 'PAIRWISE', label: 'Comparisons on the expo floor' },
  { value: 'BOTH', label: 'Both' },
];

/** How judges judge, for the event and per track: until judging opens (the server refuses
 *  after, and says so). A track set to the event's mode follows the event again. */
function JudgingModes({
  slug,
  ev,
  onChanged,
}: {
  slug: string;
  ev: { judgingMode: Mode; judgingOpen?: string | null; tracks: { id: string; name: string; judgingMode?: Mode | null }[] };
  onChanged: () => Promise<void>;
}) {
  const m = useMutation(SetJudgingMode);
  const [done, setDone] = useState('');
  const fixed = ev.judgingOpen != null && new Date(ev.judgingOpen) <= new Date();
  const set = async (mode: string, track: { id: string; name: string } | null) => {
    setDone('');
    if (await m.run({ event: slug, mode: mode as Mode, track: track?.id ?? null })) {
      const what = MODES.find((x) => x.value === mode)?.label.toLowerCase();
      setDone(track ? `${track.name} is judged by ${what}.` : `The event is judged by ${what}.`);
      await onChanged();
    }
  };
  return (
    <section aria-labelledby="judging-mode-h">
      <h2 id="judging-mode-h">How judges judge</h2>
      <p class="muted">
        By the rubric, by comparing two projects at a time as they walk the expo floor (one tap: which was better?), or both; per track if
        tracks differ. {fixed ? 'Judging has opened: the mode is fixed.' : 'Fixed once judging opens.'}
      </p>
      <Select label="The event" value={ev.judgingMode} disabled={fixed || m.loading} options={MODES} onValue={(v) => void set(v, null)} />
      {ev.tracks.map((t) => (
        <Select
          key={t.id}
          label={`Track ${t.name}`}
          value={t.judgingMode ?? 'EVENT'}
          disabled={fixed || m.loading}
          options={[{ value: 'EVENT', label: 'As the event' }, ...MODES]}
          onValue={(v) => void set(v === 'EVENT' ? ev.judgingMode : v, t)}
        />
      ))}
      <ErrorNote error={m.error} />
      <Notice>{done}</Notice>
    </section>
  );
}

const CreateTrack = graphql(`
  mutation CreateTrack($event: String!, $name: String!, $externalId: String) {
    createTrack(event: $event, name: $name, externalId: $externalId) { id name }
  }
`);

export function TracksPage({ slug }: { slug: string }) {
  const { viewer } = useSession();
  const q = useQuery(TracksQuery, { slug }, { skip: !viewer });
  const [name, setName] = useState('');
  const [externalId, setExternalId] = useState('');
  const [done, setDone] = useState('');
  const m = useMutation(CreateTrack);
  const tracks = q.data?.event?.tracks ?? [];
  return (
    <OrgPage slug={slug} title="Tracks">
      <ErrorNote error={q.error} />
      {q.loading && !q.data ? (
        <Loading />
      ) : tracks.length === 0 ? (
        <p class="muted">No tracks yet. Every project belongs to one: add at least one before submissions open.</p>
      ) : (
        <Table caption="Tracks">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">External id</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {tracks.map((t) => (
              <tr key={t.id + t.name}>
                <td>{t.name}</td>
                <td>
                  <code>{t.externalId ?? t.id}</code>
                </td>
                <td>
                  <TrackActions track={t} onChanged={q.refetch} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {q.data?.event && tracks.length > 0 && <JudgingModes slug={slug} ev={q.data.event} onChanged={q.refetch} />}
      <form
        class="narrow"
        aria-labelledby="add-track-h"
        onSubmit={async (e) => {
          e.preventDefault();
          setDone('');
          const r = await m.run({ event: slug, name: name.trim(), externalId: externalId.trim() || null });
          if (r) {
            setDone(`Track ${r.createTrack.name} added.`);
            setName('');
            setExternalId('');
            await q.refetch();
          }
        }}
      >
        <h2 id="add-track-h">Add a track</h2>
        <Field label="Track name" required maxLength={200} value={name} onValue={setName} />
        <Field label="External id (optional)" hint="For fixtures and exports; generated when empty." value={externalId} onValue={setExternalId} />
        <ErrorNote error={m.error} />
        <Notice>{done}</Notice>
        <button type="submit" disabled={m.loading}>
          Add track
        </button>
      </form>
    </OrgPage>
  );
}

// ---- /e/:slug/admin/rubric -----------------------------------------------------------

const Rubric = graphql(`
  query EventRubric($slug: String!) {
    event(slug: $slug) { id rubric { id key name description min max weight position } }
  }
`);

const SetCriterion = graphql(`
  mutation SetCriterion($event: String!, $input: CriterionInput!) {
    setCriterion(event: $event, input: $input) { id key name description min max weight position }
  }
`);

const RemoveCriterion = graphql(`
  mutation RemoveCriterion($event: String!, $key: String!) {
    removeCriterion(event: $event, key: $key)
  }
`);

type Criterion = NonNullable<ResultOf<typeof Rubric>['event']>['rubric'][number];

const blank = { key: '', name: '', description: '', min: '1', max: '5', weight: '1', position: '' };

/** A description cut to one short line for the table (the form shows it whole). */
function shorten(text: string, max = 80) {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1).trimEnd()}…` : one;
}

export function RubricPage({ slug }: { slug: string }) {
  const { viewer } = useSession();
  const q = useQuery(Rubric, { slug }, { skip: !viewer });
  const rubric = q.data?.event?.rubric ?? [];
  const [editing, setEditing] = useState<string | null>(null);
  const [form, setForm] = useState(blank);
  const [done, setDone] = useState('');
  const save = useMutation(SetCriterion);
  const remove = useMutation(RemoveCriterion);
  const set = (k: keyof typeof blank) => (v: string) => setForm((f) => ({ ...f, [k]: v }));
  const edit = (c: Criterion) => {
    setEditing(c.key);
    setDone('');
    save.reset();
    setForm({ key: c.key, name: c.name, description: c.description, min: String(c.min), max: String(c.max), weight: String(c.weight), position: String(c.position) });
    requestAnimationFrame(() => document.getElementById('criterion-h')?.focus());
  };
  return (
    <OrgPage slug={slug} title="Rubric">
      <p class="muted">What judges score, in order. A project&rsquo;s score weighs each criterion by its weight.</p>
      <ErrorNote error={q.error ?? remove.error} />
      {q.loading && !q.data ? (
        <Loading />
      ) : rubric.length === 0 ? (
        <p class="muted">No criteria yet.</p>
      ) : (
        <Table caption="Criteria">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col" class="num">
                Min
              </th>
              <th scope="col" class="num">
                Max
              </th>
              <th scope="col" class="num">
                Weight
              </th>
              <th scope="col" class="num">
                Position
              </th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rubric.map((c) => (
              <tr key={c.key} data-key={c.key}>
                <td>
                  <code>{c.key}</code>
                </td>
                <td>{c.name}</td>
                <td class="org-criterion-description" title={c.description || undefined}>
                  {c.description ? shorten(c.description) : <span class="muted">none</span>}
                </td>
                <td class="num">{c.min}</td>
                <td class="num">{c.max}</td>
                <td class="num">{c.weight}</td>
                <td class="num">{c.position}</td>
                <td>
                  <div class="actions">
                    <button type="button" class="secondary" onClick={() => edit(c)}>
                      Edit <span class="visually-hidden">{c.key}</span>
                    </button>
                    <Confirm
                      action={
                        <>
                          Remove <span class="visually-hidden">{c.key}</span>
                        </>
                      }
                      yes="Confirm removal"
                      yesLabel={`Confirm removal of ${c.key}`}
                      busy={remove.loading}
                      onAsk={remove.reset}
                      onYes={async () => {
                        setDone('');
                        const r = await remove.run({ event: slug, key: c.key });
                        if (r) {
                          setDone(`Criterion ${c.key} removed.`);
                          if (editing === c.key) {
                            setEditing(null);
                            setForm(blank);
                          }
                          await q.refetch();
                        }
                      }}
                    />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <Notice>{done}</Notice>
      <form
        class="narrow"
        aria-labelledby="criterion-h"
        onSubmit={async (e) => {
          e.preventDefault();
          setDone('');
          const r = await save.run({
            event: slug,
            input: {
              key: form.key.trim(),
              name: form.name.trim(),
              description: form.description.trim(),
              min: int(form.min),
              max: int(form.max),
              weight: form.weight.trim() === '' ? null : Number(form.weight),
              position: int(form.position) ?? (editing ? null : rubric.reduce((m, c) => Math.max(m, c.position), 0) + 1),
            },
          });
          if (r) {
            setDone(editing ? `Criterion ${r.setCriterion.key} saved.` : `Criterion ${r.setCriterion.key} added.`);
            setEditing(null);
            setForm(blank);
            await q.refetch();
          }
        }}
      >
        <h2 id="criterion-h" tabIndex={-1}>
          {editing ? `Edit ${editing}` : 'Add a criterion'}
        </h2>
        <FormErrors error={save.error}>
        <Field
          label="Key"
          name="key"
          hint="Lower-case letters, digits and _; scores refer to it, so it cannot change."
          required
          pattern="[a-z0-9_]{1,32}"
          readOnly={!!editing}
          value={form.key}
          onValue={set('key')}
        />
        <Field label="Criterion name" name="name" required maxLength={200} value={form.name} onValue={set('name')} />
        <TextArea
          label="Description"
          name="description"
          hint="Optional: what judges should look for. Plain text, up to 2,000 characters; line breaks are kept."
          maxLength={2000}
          rows={4}
          value={form.description}
          onValue={set('description')}
        />
        <div class="org-inline">
          <Field label="Lowest score" name="min" type="number" value={form.min} onValue={set('min')} />
          <Field label="Highest score" name="max" type="number" value={form.max} onValue={set('max')} />
          <Field label="Weight" name="weight" type="number" step="any" min={0} value={form.weight} onValue={set('weight')} />
          <Field label="Position" name="position" type="number" value={form.position} onValue={set('position')} hint="Order in the rubric." />
        </div>
        <ErrorNote error={save.error} />
        </FormErrors>
        <div class="actions">
          <button type="submit" disabled={save.loading}>
            {editing ? 'Save criterion' : 'Add criterion'}
          </button>
          {editing && (
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setEditing(null);
                setForm(blank);
                save.reset();
              }}
            >
              Cancel editing
            </button>
          )}
        </div>
      </form>
    </OrgPage>
  );
}
