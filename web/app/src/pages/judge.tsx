// A judge's pages: the queue with progress, and the scoring form for one assignment.
import { Page } from '../ui';

export function JudgeQueuePage(_: { slug: string }) {
  return <Page title="Judging" />;
}
export function ScorePage(_: { slug: string; assignment: string }) {
  return <Page title="Score" />;
}
