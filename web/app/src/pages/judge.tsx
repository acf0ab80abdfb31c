// A judge's pages: the queue with progress, and the scoring form for one assignment.
// Both read the event's `myAssignments`, `myProgress` and `nextAssignment` (the server's
// own per-judge order); the scoring form writes through `saveReview`, and the server
// decides whether a save is allowed (window, recusal, withdrawal, complete scores).
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useMutation, useQuery } from '../api';
import { graphql, type ResultOf } from '../graphql';
import { Link, useLocation, useUnsavedGuard } from '../router';
import { useSession } from '../session';
import { Badge, Countdown, DraftNote, ErrorNote, FormErrors, Loading, Notice, Page, TextArea, When, isOpen, safeUrl, useDraft } from '../ui';
import './judge.css';
import { takesComparisons } from './compare';

const JudgeQueue = graphql(`
  query JudgeQueue($slug: String!) {
    event(slug: $slug) {
      id
      slug
      name
      judgingOpen
      judgingClose
      timeZone
      myRoles
      judgingMode
      tracks { judgingMode }
      myProgress { done total }
      nextAssignment { id project { id title table } }
      rubric { key name description min max weight position }
      myAssignments {
        id
        status
        project { id title tagline table track { id name } }
        review { id submitted submittedAt version comment scores { criterion value } }
      }
    }
  }
`);

const ProjectForJudge = graphql(`
  query ProjectForJudge($id: ID!) {
    project(id: $id) {
      id
      title
      tagline
      summary
      description
      repoUrl
      demoUrl
      tags
      status
      table
      track { id name }
      team { id name }
    }
  }
`);

const SaveReview = graphql(`
  mutation SaveReview($assignment: ID!, $scores: [ScoreInput!]!, $comment: String, $submit: Boolean) {
    saveReview(assignment: $assignment, scores: $scores, comment: $comment, submit: $submit) {
      id
      submitted
      submittedAt
      version
      comment
      scores { criterion value }
    }
  }
`);

type QueueEvent = NonNullable<ResultOf<typeof JudgeQueue>['event']>;
type Assignment = QueueEvent['myAssignments'][number];
type Criterion = QueueEvent['rubric'][number];

type Standing = 'todo' | 'draft' | 'submitted' | 'recused';

function standing(a: Assignment): Standing {
  if (a.status === 'recused') return 'recused';
  if (a.review?.submitted) return 'submitted';
  if (a.review) return 'draft';
  return 'todo';
}

const STANDING_LABEL: Record<Standing, [string, 'plain' | 'good' | 'warn' | 'bad']> = {
  todo: ['to do', 'plain'],
  draft: ['draft saved', 'warn'],
  submitted: ['submitted', 'good'],
  recused: ['recused', 'plain'],
};

function StandingBadge({ s }: { s: Standing }) {
  const [label, tone] = STANDING_LABEL[s];
  return <Badge tone={tone}>{label}</Badge>;
}

/** The weighted rubric total scaled to 0..100, as the server's results compute it; null
 *  until every criterion is scored. */
export function weightedTotal(rubric: Criterion[], scores: { criterion: string; value: number }[]): number | null {
  let sum = 0;
  let weights = 0;
  for (const c of rubric) {
    const s = scores.find((x) => x.criterion === c.key);
    if (!s) return null;
    sum += (c.weight * (s.value - c.min)) / (c.max - c.min || 1);
    weights += c.weight;
  }
  return weights > 0 ? (100 * sum) / weights : null;
}

const base = (slug: string) => `/e/${encodeURIComponent(slug)}`;
const scoreHref = (slug: string, id: string) => `${base(slug)}/judge/${encodeURIComponent(id)}`;

/** What to show instead of the page when the viewer may not be here. */
function Gate({
  slug,
  title,
  children,
}: {
  slug: string;
  title: string;
  children: (ev: QueueEvent, refetch: () => Promise<void>) => ComponentChildren;
}) {
  const { viewer, loading: sessionLoading } = useSession();
  const { path } = useLocation();
  const q = useQuery(JudgeQueue, { slug }, { skip: !viewer });
  if (sessionLoading) return <Page title={title}><Loading /></Page>;
  if (!viewer)
    return (
      <Page title={title}>
        <p>
          Judges score projects here after logging in. <Link href={`/login?next=${encodeURIComponent(path)}`}>Log in</Link>
        </p>
      </Page>
    );
  if (!q.data && !q.error) return <Page title={title}><Loading /></Page>;
  if (!q.data) return <Page title={title}><ErrorNote error={q.error} /></Page>;
  const ev = q.data.event;
  if (!ev)
    return (
      <Page title="Event not found">
        <p>
          No event is called “{slug}”. <Link href="/">See all events</Link>.
        </p>
      </Page>
    );
  if (!ev.myRoles.includes('JUDGE'))
    return (
      <Page title={title}>
        <p>
          You are not a judge in {ev.name}. <Link href={base(slug)}>Back to the event</Link>.
        </p>
      </Page>
    );
  return <>{children(ev, q.refetch)}</>;
}

function ProgressLine({ done, total }: { done: number; total: number }) {
  return (
    <div class="judge-progress">
      <progress max={Math.max(total, 1)} value={done} aria-label="Reviews submitted" />
      <p>
        <strong>
          {done} of {total}
        </strong>{' '}
        reviewed
      </p>
    </div>
  );
}

function WindowLine({ ev }: { ev: QueueEvent }) {
  const { judgingOpen: open, judgingClose: close } = ev;
  if (!open || !close) return <p class="judge-window muted">This event has no judging window yet: reviews cannot be saved.</p>;
  const now = Date.now();
  if (isOpen(open, close, now))
    return (
      <p class="judge-window">
        <Badge tone="good">Judging is open</Badge> Closes in <Countdown to={close} /> (<When at={close} zone={ev.timeZone} />)
      </p>
    );
  if (now < new Date(open).getTime())
    return (
      <p class="judge-window">
        <Badge tone="warn">Judging has not opened</Badge> Opens in <Countdown to={open} /> (<When at={open} zone={ev.timeZone} />)
      </p>
    );
  return (
    <p class="judge-window">
      <Badge tone="bad">Judging is closed</Badge> It closed <When at={close} zone={ev.timeZone} />; reviews can no longer be changed.
    </p>
  );
}

export function JudgeQueuePage({ slug }: { slug: string }) {
  return (
    <Gate slug={slug} title="Judging">
      {(ev) => {
        const open = isOpen(ev.judgingOpen, ev.judgingClose);
        const rows = ev.myAssignments;
        const toReview = rows.filter((a) => standing(a) === 'todo' || standing(a) === 'draft');
        const reviewed = rows.filter((a) => standing(a) === 'submitted');
        const recused = rows.filter((a) => standing(a) === 'recused');
        return (
          <Page title="Judging">
            <ProgressLine done={ev.myProgress.done} total={ev.myProgress.total} />
            <WindowLine ev={ev} />
            {takesComparisons(ev) && (
              <p>
                <Link class="button" href={`/e/${slug}/compare`}>
                  Compare projects, table by table
                </Link>
              </p>
            )}
            {ev.nextAssignment ? (
              <p>
                <Link class="button judge-next" href={scoreHref(slug, ev.nextAssignment.id)}>
                  Score the next project
                  <span class="muted-on-accent">
                    {ev.nextAssignment.project.table ? `Table ${ev.nextAssignment.project.table}: ` : ''}
                    {ev.nextAssignment.project.title}
                  </span>
                </Link>
              </p>
            ) : rows.length === 0 ? (
              <p>No projects are assigned to you yet. The organizers assign them; check back later.</p>
            ) : (
              <Notice>Every project in your queue has a submitted review. Thank you!</Notice>
            )}

            <h2>To review ({toReview.length})</h2>
            {toReview.length === 0 ? (
              <p class="muted">Nothing left to review.</p>
            ) : (
              <ul class="judge-list" aria-label="To review">
                {toReview.map((a) => (
                  <li>
                    <Link href={scoreHref(slug, a.id)} class="judge-item-title">
                      {a.project.title}
                    </Link>
                    <span class="judge-item-meta">
                      {a.project.table && <span class="judge-table">Table {a.project.table}</span>}{' '}
                      <span class="muted">{a.project.track.name}</span> <StandingBadge s={standing(a)} />
                    </span>
                    {a.project.tagline && <span class="judge-item-tagline muted">{a.project.tagline}</span>}
                  </li>
                ))}
              </ul>
            )}

            <h2>Reviewed ({reviewed.length})</h2>
            {reviewed.length === 0 ? (
              <p class="muted">Your submitted reviews will be listed here.</p>
            ) : (
              <ul class="judge-list" aria-label="Reviewed">
                {reviewed.map((a) => {
                  const total = a.review ? weightedTotal(ev.rubric, a.review.scores) : null;
                  return (
                    <li>
                      <span class="judge-item-title">{a.project.title}</span>
                      <span class="judge-item-meta">
                        <span class="muted">{a.project.track.name}</span> <StandingBadge s="submitted" />
                        {total !== null && (
                          <span class="judge-total">
                            Total <strong>{Math.round(total)}</strong>
                            <span class="muted"> / 100</span>
                          </span>
                        )}
                      </span>
                      <Link href={scoreHref(slug, a.id)} aria-label={`${open ? 'Edit' : 'View'} your review of ${a.project.title}`}>
                        {open ? 'Edit' : 'View'}
                      </Link>
                    </li>
                  );
                })}
              </ul>
            )}

            {recused.length > 0 && (
              <>
                <h2>Recused ({recused.length})</h2>
                <ul class="judge-list" aria-label="Recused">
                  {recused.map((a) => (
                    <li>
                      <span class="judge-item-title">{a.project.title}</span>
                      <span class="judge-item-meta">
                        <span class="muted">{a.project.track.name}</span> <StandingBadge s="recused" />
                      </span>
                    </li>
                  ))}
                </ul>
              </>
            )}
          </Page>
        );
      }}
    </Gate>
  );
}


function ProjectView({ id }: { id: string }) {
  const q = useQuery(ProjectForJudge, { id });
  if (!q.data && q.loading) return <Loading what="Loading the project" />;
  if (!q.data) return <ErrorNote error={q.error} />;
  const p = q.data.project;
  if (!p) return <p>This project is no longer available.</p>;
  const repo = safeUrl(p.repoUrl);
  const demo = safeUrl(p.demoUrl);
  return (
    <article class="judge-project" aria-label="The project">
      {p.tagline && <p class="judge-tagline">{p.tagline}</p>}
      <p class="judge-item-meta">
        {p.table && (
          <span class="judge-table">
            Table <strong>{p.table}</strong>
          </span>
        )}
        <span>
          Track: <strong>{p.track.name}</strong>
        </span>
        <span>
          Team: <strong>{p.team.name}</strong>
        </span>
        {p.tags.map((t) => (
          <Badge>{t}</Badge>
        ))}
      </p>
      {(repo || demo) && (
        <p class="judge-links">
          {repo && (
            <a href={repo} target="_blank" rel="noopener noreferrer nofollow">
              Source repository<span class="visually-hidden"> (opens in a new tab)</span>
            </a>
          )}
          {demo && (
            <a href={demo} target="_blank" rel="noopener noreferrer nofollow">
              Demo<span class="visually-hidden"> (opens in a new tab)</span>
            </a>
          )}
        </p>
      )}
      {p.summary && (
        <>
          <h2>Summary</h2>
          <p class="judge-text">{p.summary}</p>
        </>
      )}
      {p.description && (
        <details class="judge-description" open={p.description.length < 1500}>
          <summary>Description</summary>
          <div class="judge-text">{p.description}</div>
        </details>
      )}
      {!p.summary && !p.description && <p class="muted">The team wrote no summary or description.</p>}
    </article>
  );
}

/** One criterion: a row of radio buttons from min to max (real radios in a fieldset, so
 *  arrow keys move between values), or a number field when the range is too wide. */
function CriterionInput({
  c,
  value,
  onValue,
  invalid,
  disabled,
}: {
  c: Criterion;
  value: number | undefined;
  onValue: (v: number) => void;
  invalid: boolean;
  disabled: boolean;
}) {
  const span = c.max - c.min;
  const values = span <= 20 ? Array.from({ length: span + 1 }, (_, i) => c.min + i) : null;
  const name = `score-${c.key}`;
  const descId = `criterion-desc-${c.key}`;
  const description = c.description.trim();
  return (
    <fieldset
      disabled={disabled}
      class={`judge-criterion${invalid ? ' invalid' : ''}`}
      aria-invalid={invalid || undefined}
      aria-describedby={description ? descId : undefined}
    >
      <legend>
        <span class="judge-criterion-name">{c.name}</span>
        <span class="judge-criterion-range muted">
          {' '}
          {c.min} to {c.max}
          {c.weight !== 1 && <> · weight {c.weight}</>}
        </span>
      </legend>
      {description && (
        <p id={descId} class="judge-criterion-description">
          {c.description}
        </p>
      )}
      <p class="judge-current" aria-hidden="true">
        {value === undefined ? <span class="muted">not scored yet</span> : <><strong>{value}</strong><span class="muted"> / {c.max}</span></>}
      </p>
      {values ? (
        <div class="judge-scale">
          {values.map((v) => (
            <label class="judge-pick">
              <input type="radio" name={name} value={v} checked={value === v} onChange={() => onValue(v)} />
              <span>{v}</span>
            </label>
          ))}
        </div>
      ) : (
        <label class="judge-number">
          <span class="visually-hidden">{c.name} score</span>
          <input
            type="number"
            inputMode="numeric"
            min={c.min}
            max={c.max}
            step={1}
            value={value ?? ''}
            onInput={(e) => {
              const n = Number(e.currentTarget.value);
              if (e.currentTarget.value !== '' && Number.isInteger(n)) onValue(n);
            }}
          />
        </label>
      )}
    </fieldset>
  );
}

const COMMENT_MAX = 4000;

export function ScorePage({ slug, assignment }: { slug: string; assignment: string }) {
  return (
    <Gate slug={slug} title="Score a project">
      {(ev, refetch) => {
        const a = ev.myAssignments.find((x) => x.id === assignment);
        if (!a)
          return (
            <Page title="Assignment not found">
              <p>
                This assignment is not in your queue: it may belong to another judge, its project may have been
                withdrawn, or the link is wrong.
              </p>
              <p>
                <Link href={`${base(slug)}/judge`}>Back to your queue</Link>
              </p>
            </Page>
          );
        return <ScoreForm key={a.id} slug={slug} ev={ev} a={a} refetch={refetch} />;
      }}
    </Gate>
  );
}

function ScoreForm({ slug, ev, a, refetch }: { slug: string; ev: QueueEvent; a: Assignment; refetch: () => Promise<void> }) {
  const rubric = [...ev.rubric].sort((x, y) => x.position - y.position || x.key.localeCompare(y.key));
  const [values, setValues] = useState<Record<string, number>>(() =>
    Object.fromEntries((a.review?.scores ?? []).map((s) => [s.criterion, s.value])),
  );
  const [comment, setComment] = useState(a.review?.comment ?? '');
  const [dirty, setDirty] = useState(false);
  const [outcome, setOutcome] = useState<'draft' | 'submitted' | 'updated' | null>(null);
  const [tried, setTried] = useState(false);
  const save = useMutation(SaveReview);
  const open = isOpen(ev.judgingOpen, ev.judgingClose);
  const submitted = !!a.review?.submitted;
  // What the server refuses anyway, disabled before anyone types: outside the judging
  // window, or recused.
  const locked = !open || a.status === 'recused';

  // The unsaved scores and comment survive a reload (by criterion, in the rubric's order).
  type Kept = { scores: (number | null)[]; comment: string };
  const kept = (v: Record<string, number>, text: string): Kept => ({ scores: rubric.map((c) => v[c.key] ?? null), comment: text });
  const savedValues = Object.fromEntries((a.review?.scores ?? []).map((s) => [s.criterion, s.value]));
  const draft = useDraft<Kept>(`review.${a.id}`, kept(values, comment), kept(savedValues, a.review?.comment ?? ''), (d) => {
    setValues(Object.fromEntries(rubric.flatMap((c, i) => (d.scores[i] == null ? [] : [[c.key, d.scores[i] as number]]))));
    setComment(d.comment);
    setDirty(true);
  });
  const changed = JSON.stringify(kept(values, comment)) !== JSON.stringify(kept(savedValues, a.review?.comment ?? ''));
  useUnsavedGuard(changed && !locked);

  // Keyboard focus scrolls clear of the sticky Save/Submit bar: the page's scroll padding
  // follows the bar's height (styles: html:has(.judge-bar)).
  const bar = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = bar.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const root = document.documentElement;
    const ro = new ResizeObserver(() => root.style.setProperty('--judge-bar-height', `${el.offsetHeight}px`));
    ro.observe(el);
    return () => {
      ro.disconnect();
      root.style.removeProperty('--judge-bar-height');
    };
  }, []);

  const change = () => {
    setDirty(true);
    setOutcome(null);
    save.reset();
  };

  const run = async (submit: boolean) => {
    setTried(submit);
    const scores = rubric.filter((c) => values[c.key] !== undefined).map((c) => ({ criterion: c.key, value: values[c.key] }));
    const r = await save.run({ assignment: a.id, scores, comment, submit });
    if (r) {
      await refetch();
      setDirty(false);
      setOutcome(submitted ? 'updated' : r.saveReview.submitted ? 'submitted' : 'draft');
    } else {
      // A refusal may mean the event moved (a window closed): read it again, so the form
      // shows what the server now allows.
      await refetch();
    }
  };

  const missing = rubric.filter((c) => values[c.key] === undefined);
  const next = ev.nextAssignment && ev.nextAssignment.id !== a.id ? ev.nextAssignment : null;
  const queue = `${base(slug)}/judge`;

  return (
    <Page title={a.project.title}>
      <p class="judge-crumbs">
        <Link href={queue}>← Your queue</Link>
        <span>
          <StandingBadge s={standing(a)} />
        </span>
      </p>
      <ProjectView id={a.project.id} />

      <form
        class="judge-form"
        aria-labelledby="judge-form-title"
        onSubmit={(e) => {
          e.preventDefault();
          void run(true);
        }}
      >
        <h2 id="judge-form-title">Your scores</h2>
        {!open && <WindowLine ev={ev} />}
        <DraftNote draft={draft} />
        {a.status === 'recused' && <p class="error">You are recused from this project: it cannot be reviewed.</p>}
        {rubric.length === 0 && <p class="muted">The organizers have not set up a rubric yet.</p>}
        {rubric.map((c) => (
          <CriterionInput
            c={c}
            value={values[c.key]}
            invalid={tried && !!save.error && save.error.code === 'BAD_USER_INPUT' && values[c.key] === undefined}
            disabled={locked}
            onValue={(v) => {
              setValues((old) => ({ ...old, [c.key]: v }));
              change();
            }}
          />
        ))}
        <FormErrors error={save.error}>
        <TextArea
          label="Comment (optional)"
          name="comment"
          readOnly={locked}
          hint={`${comment.length} of ${COMMENT_MAX} characters. The organizers read it; teams may read it anonymously once results are published.`}
          maxLength={COMMENT_MAX}
          value={comment}
          onValue={(v) => {
            setComment(v);
            change();
          }}
        />
        </FormErrors>

        <div class="judge-bar" ref={bar}>
          <ErrorNote error={save.error} />
          {outcome === 'submitted' || outcome === 'updated' ? (
            <div class="judge-done">
              <Notice>
                {outcome === 'submitted' ? 'Review submitted.' : 'Changes saved.'} {ev.myProgress.done} of {ev.myProgress.total}{' '}
                reviewed.
              </Notice>
              <div class="actions">
                {next ? (
                  <Link class="button" href={scoreHref(slug, next.id)}>
                    Next project
                  </Link>
                ) : (
                  <span class="muted">No more projects in your queue.</span>
                )}
                <Link class="button secondary" href={queue}>
                  Back to the queue
                </Link>
              </div>
            </div>
          ) : (
            <>
              {outcome === 'draft' && <Notice>Draft saved. It counts only once submitted.</Notice>}
              <p class="judge-state muted" aria-live="polite">
                {dirty ? 'Unsaved changes · ' : ''}
                {missing.length === 0 ? 'Every criterion scored' : `${rubric.length - missing.length} of ${rubric.length} criteria scored`}
              </p>
              <div class="actions">
                {submitted ? (
                  <button type="submit" disabled={save.loading || locked}>
                    Save changes
                  </button>
                ) : (
                  <>
                    <button type="button" class="secondary" disabled={save.loading || locked} onClick={() => void run(false)}>
                      Save draft
                    </button>
                    <button type="submit" disabled={save.loading || locked}>
                      Submit review
                    </button>
                  </>
                )}
              </div>
            </>
          )}
        </div>
      </form>
    </Page>
  );
}
