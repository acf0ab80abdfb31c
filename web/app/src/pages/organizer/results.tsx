import { Page } from '../../ui';

export function LeaderboardPage(_: { slug: string }) {
  return <Page title="LeaderboardPage" />;
}
export function CalibrationPage(_: { slug: string }) {
  return <Page title="CalibrationPage" />;
}
