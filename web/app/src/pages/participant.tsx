// A participant's pages: their team (members, invite by link, leave) and their project.
import { Page } from '../ui';

export function TeamPage(_: { slug: string }) {
  return <Page title="My team" />;
}
export function MyProjectPage(_: { slug: string }) {
  return <Page title="My project" />;
}
