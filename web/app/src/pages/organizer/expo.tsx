// The organizer's Import & tables page: bring projects, teams and their members in from a
// Devpost submissions export (paste or pick the CSV, preview what would come in and which
// rows are left out by line, then import), and place projects at expo tables. And the
// Invitation links page: every pending invitation's link at once, as a CSV download or a
// printable page of QR codes (how 200 judges get their links without mail), and every
// judge's standing sign-in link the same way.
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { Badge, Confirm, download, ErrorNote, Field, Loading, Notice, Table, TextArea, When } from '../../ui';
import { IssueJudgeSignIns, type JudgeSheet } from './judge-sign-in';
import { OrgPage } from './nav';
import './organizer-admin.css';

const ImportDevpost = graphql(`
  mutation ImportDevpost($event: String!, $csv: String!, $dryRun: Boolean) {
    importDevpost(event: $event, csv: $csv, dryRun: $dryRun) {
      dryRun
      projects
      teams
      people
      rows { line title table members new }
      problems { line message }
    }
  }
`);

const InviteImported = graphql(`
  mutation InviteImportedFromDevpost($event: String!) {
    inviteImported(event: $event)
  }
`);

const ExpoProjects = graphql(`
  query ExpoProjects($slug: String!) {
    event(slug: $slug) {
      id
      projects(first: 100) { totalCount nodes { id title table team { id name } } }
    }
  }
`);

const SetProjectTable = graphql(`
  mutation SetProjectTable($project: ID!, $table: String) {
    setProjectTable(project: $project, table: $table) { id table }
  }
`);

type Report = ResultOf<typeof ImportDevpost>['importDevpost'];

function ReportView({ r }: { r: Report }) {
  return (
    <section aria-label={r.dryRun ? 'Preview' : 'Imported'}>
      <Notice>
        {r.dryRun ? 'Would import' : 'Imported'} {r.projects} project{r.projects === 1 ? '' : 's'}, {r.teams} team{r.teams === 1 ? '' : 's'} and {r.people} new{' '}
        {r.people === 1 ? 'person' : 'people'}.
        {r.problems.length > 0 && ` ${r.problems.length} row${r.problems.length === 1 ? ' is' : 's are'} left out.`}
      </Notice>
      {r.problems.length > 0 && (
        <>
          <h3>Rows left out</h3>
          <ul class="devpost-problems" aria-label="Rows left out">
            {r.problems.map((p) => (
              <li>
                <strong>Line {p.line}</strong>: {p.message}
              </li>
            ))}
          </ul>
        </>
      )}
      {r.rows.length > 0 && (
        <Table caption="Submissions in the file">
          <thead>
            <tr>
              <th scope="col" class="num">Line</th>
              <th scope="col">Project</th>
              <th scope="col">Table</th>
              <th scope="col">Team members</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {r.rows.map((row) => (
              <tr>
                <td class="num">{row.line}</td>
                <th scope="row">{row.title}</th>
                <td>{row.table ?? '—'}</td>
                <td>{row.members.join(', ') || '—'}</td>
                <td>{row.new ? <Badge tone="good">new</Badge> : <Badge>imported before</Badge>}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </section>
  );
}

function DevpostImport({ slug, onImported }: { slug: string; onImported: () => void }) {
  const [csv, setCsv] = useState('');
  const [report, setReport] = useState<Report | null>(null);
  const [invited, setInvited] = useState<number | null>(null);
  const m = useMutation(ImportDevpost);
  const invite = useMutation(InviteImported);
  const run = async (dryRun: boolean) => {
    setInvited(null);
    const d = await m.run({ event: slug, csv, dryRun });
    if (d) {
      setReport(d.importDevpost);
      if (!dryRun) onImported();
    }
  };
  return (
    <section aria-labelledby="devpost-h">
      <h2 id="devpost-h">Import from Devpost</h2>
      <p class="muted">
        In Devpost, export the submissions as CSV (Manage hackathon → Metrics → Export submissions), then pick the file or paste its text. Each new submission becomes a project with
        its team; team members join as participants and get their links when you invite them. Importing the same file again adds only what is new.
      </p>
      <form
        class="narrow"
        onSubmit={(e) => {
          e.preventDefault();
          void run(true);
        }}
      >
        <div class="field">
          <label for="devpost-file">CSV file</label>
          <input
            id="devpost-file"
            type="file"
            accept=".csv,text/csv"
            onChange={async (e) => {
              const file = (e.currentTarget as HTMLInputElement).files?.[0];
              if (file) {
                setCsv(await file.text());
                setReport(null);
              }
            }}
          />
        </div>
        <TextArea
          label="Or paste the CSV"
          rows={6}
          value={csv}
          onValue={(v) => {
            setCsv(v);
            setReport(null);
          }}
        />
        <div class="row">
          <button type="submit" disabled={m.loading || !csv.trim()}>
            Preview
          </button>
          <button type="button" class="secondary" disabled={m.loading || !report?.dryRun || report.projects === 0} onClick={() => void run(false)}>
            Import {report?.dryRun ? `${report.projects} project${report.projects === 1 ? '' : 's'}` : ''}
          </button>
        </div>
        <ErrorNote error={m.error} />
      </form>
      {report && <ReportView r={report} />}
      {report && !report.dryRun && (
        <p>
          <button
            type="button"
            disabled={invite.loading}
            onClick={async () => {
              const d = await invite.run({ event: slug });
              if (d) setInvited(d.inviteImported);
            }}
          >
            Invite the imported people
          </button>{' '}
          {invited !== null && <span role="status">{invited} invitation{invited === 1 ? '' : 's'} created: their links are on the People page.</span>}
          <ErrorNote error={invite.error} />
        </p>
      )}
    </section>
  );
}

type ExpoProject = NonNullable<ResultOf<typeof ExpoProjects>['event']>['projects']['nodes'][number];

function TableRow({ p, onSaved }: { p: ExpoProject; onSaved: () => void }) {
  const [table, setTable] = useState(p.table ?? '');
  const m = useMutation(SetProjectTable);
  const changed = table.trim() !== (p.table ?? '');
  return (
    <tr>
      <th scope="row">{p.title}</th>
      <td>{p.team.name}</td>
      <td>
        <form
          class="inline"
          onSubmit={async (e) => {
            e.preventDefault();
            if (await m.run({ project: p.id, table: table.trim() || null })) onSaved();
          }}
        >
          <Field label={`Table of ${p.title}`} maxLength={16} value={table} onValue={setTable} />
          <button type="submit" class="secondary" disabled={m.loading || !changed}>
            Save
          </button>
          <ErrorNote error={m.error} />
        </form>
      </td>
    </tr>
  );
}

function Tables({ slug }: { slug: string }) {
  const q = useQuery(ExpoProjects, { slug });
  if (!q.data && !q.error) return <Loading />;
  if (!q.data?.event) return <ErrorNote error={q.error} />;
  const list = q.data.event.projects;
  return (
    <section aria-labelledby="tables-h">
      <h2 id="tables-h">Expo tables</h2>
      <p class="muted">
        Judges walk their queue in table order (2 before 10). Teams can set their own table until the submission deadline; here you set or clear any project’s table at any time. Showing the
        first {list.nodes.length} of {list.totalCount} submitted projects.
      </p>
      <Table caption="Projects and their tables">
        <thead>
          <tr>
            <th scope="col">Project</th>
            <th scope="col">Team</th>
            <th scope="col">Table</th>
          </tr>
        </thead>
        <tbody>
          {list.nodes.map((p) => (
            <TableRow key={p.id + (p.table ?? '')} p={p} onSaved={() => void q.refetch()} />
          ))}
        </tbody>
      </Table>
    </section>
  );
}

export function ExpoPage({ slug }: { slug: string }) {
  const [version, setVersion] = useState(0);
  return (
    <OrgPage slug={slug} title="Import & tables">
      <DevpostImport slug={slug} onImported={() => setVersion((v) => v + 1)} />
      <Tables key={version} slug={slug} />
    </OrgPage>
  );
}

const ExportInvitationLinks = graphql(`
  mutation ExportInvitationLinks($event: String!) {
    exportInvitationLinks(event: $event) { email role link expiresAt qrSvg }
  }
`);

type InvitationLink = ResultOf<typeof ExportInvitationLinks>['exportInvitationLinks'][number];

// The links CSV is written by the server (`exportCsv(kind: INVITATION_LINKS)`), with the
// exports' formula guard: the client keeps no copy of it.
const ExportLinksCsv = graphql(`
  mutation ExportLinksCsv($event: String!) {
    exportCsv(event: $event, kind: INVITATION_LINKS)
  }
`);

export function LinksPage({ slug }: { slug: string }) {
  const m = useMutation(ExportInvitationLinks);
  const csv = useMutation(ExportLinksCsv);
  const [links, setLinks] = useState<InvitationLink[] | null>(null);
  const load = async () => {
    const d = await m.run({ event: slug });
    if (d) setLinks(d.exportInvitationLinks);
    return d?.exportInvitationLinks;
  };
  return (
    <OrgPage slug={slug} title="Invitation links">
      <p class="no-print">
        Every pending invitation’s link, for when the server sends no mail: download them as CSV for a mail merge, or print a page of QR codes that people scan in the room. Each link
        signs its person in once, so keep the file and the printout safe; the export is recorded in the audit log.
      </p>
      <div class="row no-print">
        <button
          type="button"
          disabled={csv.loading}
          onClick={async () => {
            const d = await csv.run({ event: slug });
            if (d) download(`${slug}-invitation-links.csv`, d.exportCsv);
          }}
        >
          Download links (CSV)
        </button>
        <button type="button" class="secondary" disabled={m.loading} onClick={() => void load()}>
          Show QR codes
        </button>
        {links && links.length > 0 && (
          <button type="button" class="secondary" onClick={() => window.print()}>
            Print
          </button>
        )}
      </div>
      <ErrorNote error={m.error ?? csv.error} />
      {links && (
        <>
          <p role="status" class="no-print">
            {links.length} pending invitation{links.length === 1 ? '' : 's'}.
          </p>
          <ul class="qr-sheet" aria-label="Invitation QR codes">
            {links.map((l) => (
              <li class="qr-card">
                {l.qrSvg && <div class="qr" role="img" aria-label={`QR code of the link for ${l.email}`} dangerouslySetInnerHTML={{ __html: l.qrSvg }} />}
                <strong>{l.email}</strong>
                <span>{l.role.toLowerCase()}</span>
                <small class="muted">
                  until <When at={l.expiresAt} />
                </small>
              </li>
            ))}
          </ul>
        </>
      )}
      <JudgeLinks slug={slug} />
    </OrgPage>
  );
}

/** Every judge's standing sign-in link at once (issued anew: the server keeps only hashes). */
function JudgeLinks({ slug }: { slug: string }) {
  const m = useMutation(IssueJudgeSignIns);
  const [sheet, setSheet] = useState<JudgeSheet | null>(null);
  return (
    <section aria-labelledby="judge-links-h" class="judge-links">
      <h2 id="judge-links-h" class="no-print">
        Judges’ sign-in links
      </h2>
      <p class="no-print">
        A judge’s standing link signs them in with one tap, all through judging, and only to score. Only a hash is kept, so they are shown when issued: issuing for every judge
        replaces the links and codes they have now.
      </p>
      <div class="row no-print">
        <Confirm
          action="Issue links for every judge"
          question="Every judge's current sign-in link and code stop working."
          yes="Yes, issue new links"
          busy={m.loading}
          onYes={async () => {
            const d = await m.run({ event: slug });
            if (!d) return false;
            setSheet(d.issueJudgeSignIns);
          }}
        />
        {sheet && (
          <button type="button" class="secondary" onClick={() => download(`${slug}-judge-sign-in-links.csv`, sheet.csv)}>
            Download judges’ links (CSV)
          </button>
        )}
      </div>
      <ErrorNote error={m.error} />
      {sheet && (
        <>
          <p role="status" class="no-print">
            {sheet.signIns.length} judge{sheet.signIns.length === 1 ? '' : 's'}: new links issued.
          </p>
          <ul class="qr-sheet" aria-label="Judge sign-in QR codes">
            {sheet.signIns.map((j) => (
              <li class="qr-card">
                {j.qrSvg && <div class="qr" role="img" aria-label={`QR code of the sign-in link for ${j.email}`} dangerouslySetInnerHTML={{ __html: j.qrSvg }} />}
                <strong>{j.name}</strong>
                <span>{j.email}</span>
                <span>
                  judge · code <code>{j.code}</code>
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
