import { Page } from '../../ui';

export function PeoplePage(_: { slug: string }) {
  return <Page title="PeoplePage" />;
}
