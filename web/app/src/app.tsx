// The frame around every page (header, account menu, the event's tabs) and the route
// table: a new page gets a line in ROUTES and a component in pages/.
import type { ComponentChildren, ComponentType } from 'preact';
import { useQuery, useSocketStatus } from './api';
import { graphql } from './graphql';
import { ForgotPage, JoinPage, LinkPage, LoginPage, LogOutButton, SignupPage } from './pages/account';
import { AccountPage } from './pages/my-account';
import { EventTabs } from './pages/event-tabs';
import { ComparePage } from './pages/compare';
import { JudgeQueuePage, ScorePage } from './pages/judge';
import { JudgeSignInCodePage, JudgeSignInLinkPage } from './pages/judge-sign-in';
import * as Org from './pages/organizer';
import { MyProjectPage, TeamPage } from './pages/participant';
import { EventPage, EventsPage, GalleryPage, ProjectPage, ResultsPage, VerifyPage } from './pages/public';
import { Link, match, useLocation } from './router';
import { MyEventsPage } from './pages/my-events';
import { SetupPage } from './pages/setup';
import { VotePage } from './pages/vote';
import { SessionProvider, useSession } from './session';
import { EventNameContext, Page } from './ui';

// Each page takes its path's parameters as props (`/e/:slug` gives `{ slug }`).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Params = any;

/** Every page of the client. server/src/http/assets.rs serves index.html under the same prefixes (a test holds them equal). */
export const ROUTES: [string, ComponentType<Params>][] = [
  ['/', EventsPage],
  ['/login', LoginPage],
  ['/signup', SignupPage],
  ['/forgot', ForgotPage],
  ['/account', AccountPage],
  ['/my-events', MyEventsPage],
  ['/new-event', Org.NewEventPage],
  ['/invite/:token', (p) => <LinkPage kind="invite" token={p.token} />],
  ['/reset/:token', (p) => <LinkPage kind="reset" token={p.token} />],
  ['/confirm/:token', (p) => <LinkPage kind="confirm" token={p.token} />],
  ['/join/:code', JoinPage],
  ['/setup/:token', SetupPage],
  ['/judge-sign-in', JudgeSignInCodePage],
  ['/judge-sign-in/:token', JudgeSignInLinkPage],
  ['/e/:slug', EventPage],
  ['/e/:slug/projects', GalleryPage],
  ['/e/:slug/projects/:id', ProjectPage],
  ['/e/:slug/results', ResultsPage],
  ['/e/:slug/verify', VerifyPage],
  ['/e/:slug/vote', VotePage],
  ['/e/:slug/team', TeamPage],
  ['/e/:slug/my-project', MyProjectPage],
  ['/e/:slug/judge', JudgeQueuePage],
  ['/e/:slug/judge/:assignment', ScorePage],
  ['/e/:slug/compare', ComparePage],
  ['/e/:slug/admin', Org.OverviewPage],
  ['/e/:slug/admin/settings', Org.SettingsPage],
  ['/e/:slug/admin/people', Org.PeoplePage],
  ['/e/:slug/admin/import', Org.ExpoPage],
  ['/e/:slug/admin/links', Org.LinksPage],
  ['/e/:slug/admin/tracks', Org.TracksPage],
  ['/e/:slug/admin/prizes', Org.PrizesPage],
  ['/e/:slug/admin/voting', Org.VotingPage],
  ['/e/:slug/admin/webhooks', Org.WebhooksPage],
  ['/e/:slug/admin/rubric', Org.RubricPage],
  ['/e/:slug/admin/assignments', Org.AssignmentsPage],
  ['/e/:slug/admin/recusals', Org.RecusalsPage],
  ['/e/:slug/admin/leaderboard', Org.LeaderboardPage],
  ['/e/:slug/admin/calibration', Org.CalibrationPage],
  ['/e/:slug/admin/moderation', Org.ModerationPage],
  ['/e/:slug/admin/exports', Org.ExportsPage],
  ['/e/:slug/admin/audit', Org.AuditPage],
];

function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        There is no page here. <Link href="/">See all events</Link>.
      </p>
    </Page>
  );
}

function Header() {
  const { viewer } = useSession();
  const live = useSocketStatus();
  return (
    <header class="site">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <nav aria-label="Site">
        <Link href="/" class="brand">
          Verdict
        </Link>
        <span class="spacer" />
        {live === 'reconnecting' && (
          <span class="badge warn" role="status">
            reconnecting…
          </span>
        )}
        {viewer ? (
          <>
            <Link href="/account">{viewer.user.displayName}</Link>
            <LogOutButton />
          </>
        ) : (
          <>
            <Link href="/login">Log in</Link>
            <Link href="/signup">Sign up</Link>
          </>
        )}
      </nav>
    </header>
  );
}

const EventName = graphql(`
  query EventName($slug: String!) { event(slug: $slug) { id name } }
`);

/** The frame of every `/e/:slug` page: the event's tabs, and its name for every title. */
function EventFrame({ slug, children }: { slug: string; children: ComponentChildren }) {
  const q = useQuery(EventName, { slug });
  return (
    <EventNameContext.Provider value={q.data?.event?.name ?? null}>
      <EventTabs slug={slug} />
      {children}
    </EventNameContext.Provider>
  );
}

function Routed() {
  const { path } = useLocation();
  for (const [pattern, Component] of ROUTES) {
    const params = match(pattern, path);
    if (params) {
      return params.slug ? (
        <EventFrame slug={params.slug}>
          <Component {...params} />
        </EventFrame>
      ) : (
        <Component {...params} />
      );
    }
  }
  return <NotFound />;
}

export function App() {
  return (
    <SessionProvider>
      <Header />
      <main id="main" tabIndex={-1}>
        <Routed />
      </main>
      <footer class="site muted">
        Verdict · <a href="/graphql">GraphQL API</a>
      </footer>
    </SessionProvider>
  );
}
