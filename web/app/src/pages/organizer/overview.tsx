import { Page } from '../../ui';
import { OrganizerNav } from './nav';

export function OverviewPage({ slug }: { slug: string }) {
  return (
    <Page title="Organize">
      <OrganizerNav slug={slug} />
    </Page>
  );
}
