// /e/:slug/admin/prizes: the event's prizes (overall or per track, a ranking position or a
// special award) and, when the organizers decide it rather than the ranking, their winner.
// The public podium derives every other winner from the published results.
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '../../api';
import { graphql } from '../../graphql';
import { useSession } from '../../session';
import { ErrorNote, Field, Loading, Notice, Select, Table, TextArea } from '../../ui';
import { OrgPage } from './nav';
import './organizer-admin.css';

const PrizesQuery = graphql(`
  query EventPrizes($slug: String!) {
    event(slug: $slug) {
      id
      tracks { id name }
      prizes { id name position description track { id name } winner { id title } }
      projects(first: 100) { edges { node { id title track { id } } } }
    }
  }
`);

const TopUpQuery = graphql(`
  query PrizeTopUp($slug: String!) {
    event(slug: $slug) {
      id
      reviewsPerProject
      topUpPlan { prize { id name } straddlesCutOff thinCoverage entry { projectExternalId rank rankLow rankHigh reviews project { id title } } }
    }
  }
`);

const CreatePrize = graphql(`
  mutation CreatePrize($event: String!, $input: PrizeInput!) {
    createPrize(event: $event, input: $input) { id name }
  }
`);

const AssignPrize = graphql(`
  mutation AssignPrize($id: ID!, $project: ID) {
    assignPrize(id: $id, project: $project) { id name winner { id title } }
  }
`);

const place = (n: number) => (n === 0 ? 'special award' : `place ${n}`);

export function PrizesPage({ slug }: { slug: string }) {
  const { viewer } = useSession();
  const q = useQuery(PrizesQuery, { slug }, { skip: !viewer });
  const create = useMutation(CreatePrize);
  const assign = useMutation(AssignPrize);
  const [name, setName] = useState('');
  const [position, setPosition] = useState('1');
  const [track, setTrack] = useState('');
  const [description, setDescription] = useState('');
  const [done, setDone] = useState('');
  const e = q.data?.event;
  const prizes = e?.prizes ?? [];
  const projects = e?.projects.edges.map((x) => x.node) ?? [];
  return (
    <OrgPage slug={slug} title="Prizes">
      <ErrorNote error={q.error} />
      <p class="muted">
        The public podium gives each prize to the project at its place in the published results (within its track for a track prize), unless you assign a winner
        here. A special award has a winner only when you assign one. Prizes never change a calibration run.
      </p>
      {q.loading && !q.data ? (
        <Loading />
      ) : prizes.length === 0 ? (
        <p class="muted">No prizes yet.</p>
      ) : (
        <Table caption="Prizes">
          <thead>
            <tr>
              <th scope="col">Prize</th>
              <th scope="col">Goes to</th>
              <th scope="col">Winner</th>
            </tr>
          </thead>
          <tbody>
            {prizes.map((p) => (
              <tr key={p.id}>
                <th scope="row">{p.name}</th>
                <td>
                  {place(p.position)}
                  {p.track ? ` in ${p.track.name}` : ' overall'}
                </td>
                <td>
                  <Select
                    label={`Winner of ${p.name}`}
                    value={p.winner?.id ?? ''}
                    disabled={assign.loading}
                    onValue={async (v) => {
                      setDone('');
                      const r = await assign.run({ id: p.id, project: v || null });
                      if (r) {
                        setDone(r.assignPrize.winner ? `${r.assignPrize.name} goes to ${r.assignPrize.winner.title}.` : `${r.assignPrize.name} follows the ranking again.`);
                        await q.refetch();
                      }
                    }}
                    options={[
                      { value: '', label: p.position === 0 ? 'Not awarded yet' : 'From the published ranking' },
                      ...projects.filter((x) => !p.track || x.track?.id === p.track.id).map((x) => ({ value: x.id, label: x.title })),
                    ]}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <ErrorNote error={assign.error} />
      <TopUpPlan slug={slug} />
      <form
        class="narrow"
        aria-labelledby="add-prize-h"
        onSubmit={async (ev) => {
          ev.preventDefault();
          setDone('');
          const r = await create.run({
            event: slug,
            input: { name: name.trim(), position: Number(position), track: track || null, description: description.trim() || null },
          });
          if (r) {
            setDone(`Prize ${r.createPrize.name} added.`);
            setName('');
            setDescription('');
            await q.refetch();
          }
        }}
      >
        <h2 id="add-prize-h">Add a prize</h2>
        <Field label="Prize name" required maxLength={200} value={name} onValue={setName} />
        <Field label="Place" type="number" min={0} max={100} hint="1 = best; 0 for a special award you assign yourself." value={position} onValue={setPosition} />
        <Select label="Track" value={track} onValue={setTrack} options={[{ value: '', label: 'Overall' }, ...(e?.tracks ?? []).map((t) => ({ value: t.id, label: t.name }))]} />
        <TextArea label="Description (optional)" maxLength={2000} value={description} onValue={setDescription} />
        <ErrorNote error={create.error} />
        <Notice>{done}</Notice>
        <button type="submit" disabled={create.loading}>
          Add prize
        </button>
      </form>
    </OrgPage>
  );
}

/** Where one more review would matter most before publication: a planning aid from the
 *  latest calibration run, never a ranking. */
function TopUpPlan({ slug }: { slug: string }) {
  const q = useQuery(TopUpQuery, { slug });
  const e = q.data?.event;
  const rows = e?.topUpPlan ?? [];
  return (
    <section aria-labelledby="top-up-h">
      <h2 id="top-up-h">Where one more review matters</h2>
      <p class="muted">
        A planning aid, not a ranking: from the latest calibration run, the projects whose rank interval holds places on both sides of a prize&apos;s cut-off, or
        that have fewer than {e?.reviewsPerProject ?? 'the asked'} reviews near it. Assign them another judge before you publish.
      </p>
      <ErrorNote error={q.error} />
      {q.loading && !q.data ? (
        <Loading />
      ) : rows.length === 0 ? (
        <p class="muted">Nothing to top up (or no calibration run yet).</p>
      ) : (
        <Table caption="Projects near a prize's cut-off">
          <thead>
            <tr>
              <th scope="col">Prize</th>
              <th scope="col">Project</th>
              <th scope="col">Rank (90 % interval)</th>
              <th scope="col">Reviews</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.prize.id}-${r.entry.projectExternalId}`}>
                <td>{r.prize.name}</td>
                <th scope="row">{r.entry.project?.title ?? r.entry.projectExternalId}</th>
                <td>
                  {r.entry.rank ?? '—'} ({r.entry.rankLow}–{r.entry.rankHigh})
                </td>
                <td>{r.entry.reviews}</td>
                <td>{[r.straddlesCutOff && 'could be on either side', r.thinCoverage && 'few reviews'].filter(Boolean).join('; ')}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </section>
  );
}
