// An organizer's setup checklist on the event's overview: tracks -> rubric -> windows ->
// judges -> assignments -> judging -> calibration -> publication, each checked from the
// data (Event.setupSteps), with a link to the page that does it.
import { useQuery } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { Link } from '../../router';
import { ErrorNote } from '../../ui';

const SetupSteps = graphql(`
  query SetupSteps($slug: String!) { event(slug: $slug) { id setupSteps { key done count } } }
`);

export type SetupStepKey = NonNullable<ResultOf<typeof SetupSteps>['event']>['setupSteps'][number]['key'];

/** Each step: its name, the page (under /e/:slug/admin) that does it, and what done means. */
export const STEPS: Record<SetupStepKey, { title: string; path: string; todo: string; done: (n: number) => string }> = {
  TRACKS: { title: 'Tracks', path: '/tracks', todo: 'Add the tracks projects enter.', done: (n) => `${n} ${n === 1 ? 'track' : 'tracks'}` },
  RUBRIC: { title: 'Rubric', path: '/rubric', todo: 'Write the criteria judges score.', done: (n) => `${n} ${n === 1 ? 'criterion' : 'criteria'}` },
  WINDOWS: { title: 'Judging window', path: '/settings', todo: 'Set when judging opens and closes.', done: () => 'judging times set' },
  INVITE_JUDGES: { title: 'Invite judges', path: '/people', todo: 'Invite the judges.', done: (n) => `${n} ${n === 1 ? 'judge' : 'judges'} in or invited` },
  ASSIGN: { title: 'Assign projects', path: '/assignments', todo: 'Give each judge projects to score.', done: (n) => `${n} assignments` },
  JUDGING: { title: 'Judging', path: '', todo: 'Judges score until the judging window closes.', done: (n) => `${n} reviews in, judging closed` },
  CALIBRATE: { title: 'Calibrate', path: '/calibration', todo: 'Run the calibration over the reviews.', done: (n) => `${n} ${n === 1 ? 'run' : 'runs'}` },
  PUBLISH: { title: 'Publish results', path: '/calibration', todo: 'Publish a run as the results.', done: () => 'published' },
};

export function SetupChecklist({ slug }: { slug: string }) {
  const q = useQuery(SetupSteps, { slug });
  const steps = q.data?.event?.setupSteps;
  if (q.error) return <ErrorNote error={q.error} />;
  if (!steps) return null;
  const next = steps.find((s) => !s.done)?.key;
  return (
    <section aria-labelledby="setup-h" class="setup-checklist">
      <h2 id="setup-h">Setup</h2>
      <p class="muted">{next ? `Next: ${STEPS[next].title.toLowerCase()}.` : 'Every step is done: the results are published.'}</p>
      <ol aria-label="Setup steps">
        {steps.map((s) => {
          const step = STEPS[s.key];
          return (
            <li key={s.key} data-step={s.key} data-done={s.done ? 'yes' : 'no'} aria-current={s.key === next ? 'step' : undefined}>
              <span aria-hidden="true">{s.done ? '✓' : s.key === next ? '→' : '○'} </span>
              <Link href={`/e/${encodeURIComponent(slug)}/admin${step.path}`}>{step.title}</Link>
              <span class="muted">
                {' '}
                — {s.done ? `done: ${step.done(s.count)}` : `to do: ${step.todo}`}
              </span>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
