import { Page } from '../../ui';

export function AssignmentsPage(_: { slug: string }) {
  return <Page title="AssignmentsPage" />;
}
export function RecusalsPage(_: { slug: string }) {
  return <Page title="RecusalsPage" />;
}
