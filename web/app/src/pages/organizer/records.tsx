import { Page } from '../../ui';

export function ModerationPage(_: { slug: string }) {
  return <Page title="ModerationPage" />;
}
export function ExportsPage(_: { slug: string }) {
  return <Page title="ExportsPage" />;
}
export function AuditPage(_: { slug: string }) {
  return <Page title="AuditPage" />;
}
