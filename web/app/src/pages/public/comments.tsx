// A project's comments: plain text (never markup), a form for signed-in people, and a way
// for the event's organizers to hide one with a reason.
import { useState } from 'preact/hooks';
import { useMutation } from '../../api';
import { graphql, type ResultOf } from '../../graphql';
import { LoadMore, usePaged } from '../../paging';
import { Link } from '../../router';
import { useSession } from '../../session';
import { Badge, ErrorNote, Field, Loading, Notice, TextArea, When } from '../../ui';
import './comments.css';

const CommentsQuery = graphql(`
  query ProjectComments($id: ID!, $first: Int, $after: String) {
    project(id: $id) {
      id
      comments(first: $first, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes { id body hidden hiddenReason createdAt author { displayName } }
      }
    }
  }
`);

const PostComment = graphql(`
  mutation PostComment($project: ID!, $body: String!) { postComment(project: $project, body: $body) { id } }
`);

const HideComment = graphql(`
  mutation HideComment($id: ID!, $reason: String!) { hideComment(id: $id, reason: $reason) { id hidden hiddenReason } }
`);

type CommentNode = NonNullable<ResultOf<typeof CommentsQuery>['project']>['comments']['nodes'][number];

const BODY_MAX = 2000;

/** The project's thread: comments as plain text (never markup), a form for signed-in
 *  people, and a Hide button for the event's organizers. */
export function Thread({ slug, projectId }: { slug: string; projectId: string }) {
  const { viewer, rolesIn } = useSession();
  const organizer = !!viewer && (viewer.user.isSiteAdmin || rolesIn(slug).includes('ORGANIZER'));
  const t = usePaged(CommentsQuery, { id: projectId }, (d) => d.project?.comments, { pageSize: 20 });
  const post = useMutation(PostComment);
  const [body, setBody] = useState('');
  const [posted, setPosted] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setPosted(false);
    const d = await post.run({ project: projectId, body });
    if (d) {
      setBody('');
      setPosted(true);
      await t.reload();
    }
  };
  return (
    <section class="comments" aria-labelledby="comments-h">
      <h2 id="comments-h">Comments</h2>
      <ErrorNote error={t.error} />
      {!t.data && !t.error && <Loading what="Loading comments" />}
      {t.data && t.items.length === 0 && <p class="muted">No comments yet.</p>}
      {t.items.length > 0 && (
        <ol class="comment-list">
          {t.items.map((c) => (
            <CommentItem key={c.id} c={c} organizer={organizer} onHidden={() => t.reload()} />
          ))}
        </ol>
      )}
      {t.total > t.items.length && <LoadMore list={t} what="comments" />}
      {viewer ? (
        <form class="comment-form" onSubmit={submit}>
          <TextArea
            label="Your comment"
            hint={`Plain text, up to ${BODY_MAX.toLocaleString('en')} characters, shown with your display name (${viewer.user.displayName}).`}
            value={body}
            onValue={(v) => {
              setBody(v);
              setPosted(false);
            }}
            maxLength={BODY_MAX}
            rows={3}
            required
          />
          <button type="submit" disabled={post.loading || !body.trim()}>
            {post.loading ? 'Posting…' : 'Post comment'}
          </button>
          <ErrorNote error={post.error} />
          {posted && <Notice>Your comment was posted.</Notice>}
        </form>
      ) : (
        <p class="muted">
          <Link href="/login">Log in</Link> to comment.
        </p>
      )}
    </section>
  );
}

function CommentItem({ c, organizer, onHidden }: { c: CommentNode; organizer: boolean; onHidden: () => void }) {
  const hide = useMutation(HideComment);
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await hide.run({ id: c.id, reason })) {
      setOpen(false);
      onHidden();
    }
  };
  return (
    <li class={`comment${c.hidden ? ' comment-hidden' : ''}`} data-testid="comment">
      <p class="comment-meta">
        <strong class="comment-author">{c.author.displayName}</strong> · <When at={c.createdAt} />
        {c.hidden && (
          <>
            {' '}
            <Badge tone="warn">hidden</Badge>
          </>
        )}
      </p>
      {c.hidden && (
        <p class="muted" data-testid="comment-hidden-note">
          {c.hiddenReason ? `Hidden by the organizers: ${c.hiddenReason}` : 'This comment was hidden by the organizers.'}
        </p>
      )}
      {/* Text only: the body is never interpreted as HTML or Markdown. */}
      {c.body != null && <p class="comment-body">{c.body}</p>}
      {organizer && !c.hidden && !open && (
        <button type="button" class="secondary" onClick={() => setOpen(true)}>
          Hide
        </button>
      )}
      {open && (
        <form class="comment-hide" onSubmit={submit}>
          <Field label="Reason for hiding" hint="One line, shown to the organizers and the comment's author." value={reason} onValue={setReason} maxLength={500} required />
          <button type="submit" class="danger" disabled={hide.loading || !reason.trim()}>
            {hide.loading ? 'Hiding…' : 'Hide comment'}
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setOpen(false)}>
            Cancel
          </button>
          <ErrorNote error={hide.error} />
        </form>
      )}
    </li>
  );
}
