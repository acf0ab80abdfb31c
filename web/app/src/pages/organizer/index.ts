// The organizer's pages, one file per area; app.tsx routes /e/:slug/admin/* here.
export { NewEventPage, SettingsPage, TracksPage, RubricPage } from './event';
export { PeoplePage } from './people';
export { ModerationPage, ExportsPage, AuditPage } from './records';
export { OverviewPage } from './overview';
export { AssignmentsPage, RecusalsPage } from './assignments';
export { LeaderboardPage, CalibrationPage } from './results';
export { PrizesPage } from './prizes';
export { VotingPage } from './voting';
export { WebhooksPage } from './webhooks';
export { ExpoPage, LinksPage } from './expo';
