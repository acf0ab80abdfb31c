// Public pages: events, an event, its gallery, a project, published results, verifying them.
import { Page } from '../ui';

export function EventsPage() {
  return <Page title="Events" />;
}
export function EventPage({ slug }: { slug: string }) {
  return <Page title={slug} />;
}
export function GalleryPage(_: { slug: string }) {
  return <Page title="Projects" />;
}
export function ProjectPage(_: { slug: string; id: string }) {
  return <Page title="Project" />;
}
export function ResultsPage(_: { slug: string }) {
  return <Page title="Results" />;
}
export function VerifyPage(_: { slug: string }) {
  return <Page title="Verify the results" />;
}
