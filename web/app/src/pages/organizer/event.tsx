import { Page } from '../../ui';

export function NewEventPage(_: { slug: string }) {
  return <Page title="NewEventPage" />;
}
export function SettingsPage(_: { slug: string }) {
  return <Page title="SettingsPage" />;
}
export function TracksPage(_: { slug: string }) {
  return <Page title="TracksPage" />;
}
export function RubricPage(_: { slug: string }) {
  return <Page title="RubricPage" />;
}
