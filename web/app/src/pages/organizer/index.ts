// The organizer's pages, one file per area; app.tsx routes /e/:slug/admin/* here.
export { NewEventPage, OverviewPage, SettingsPage, TracksPage, RubricPage } from './event';
export { PeoplePage } from './people';
export { AssignmentsPage, RecusalsPage } from './assignments';
export { LeaderboardPage, CalibrationPage } from './results';
export { ModerationPage, ExportsPage, AuditPage } from './records';
