// /e/:slug/admin/webhooks: the event's webhooks (register one, its secret shown once, switch
// it off or on) and the delivery log with every attempt, where a failed delivery can be
// retried by hand.
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '../../api';
import { graphql } from '../../graphql';
import { useSession } from '../../session';
import { ErrorNote, Field, Loading, Notice, Table } from '../../ui';
import { OrgPage } from './nav';
import './organizer-admin.css';

const WebhooksQuery = graphql(`
  query EventWebhooks($slug: String!) {
    event(slug: $slug) {
      id
      webhooks { id url actions active createdAt }
      webhookDeliveries(first: 50) {
        totalCount
        nodes { id webhook seq action status attemptCount lastStatusCode lastError createdAt deliveredAt attempts { attempt startedAt statusCode error durationMs } }
      }
    }
  }
`);

const RegisterWebhook = graphql(`
  mutation RegisterWebhook($event: String!, $url: String!, $actions: [String!]) {
    registerWebhook(event: $event, url: $url, actions: $actions) { secret webhook { id url } }
  }
`);

const SetWebhookActive = graphql(`
  mutation SetWebhookActive($id: ID!, $active: Boolean!) {
    setWebhookActive(id: $id, active: $active) { id active }
  }
`);

const RetryWebhookDelivery = graphql(`
  mutation RetryWebhookDelivery($id: ID!) {
    retryWebhookDelivery(id: $id) { id status }
  }
`);

export function WebhooksPage({ slug }: { slug: string }) {
  const { viewer } = useSession();
  const q = useQuery(WebhooksQuery, { slug }, { skip: !viewer });
  const register = useMutation(RegisterWebhook);
  const setActive = useMutation(SetWebhookActive);
  const retry = useMutation(RetryWebhookDelivery);
  const [url, setUrl] = useState('');
  const [actions, setActions] = useState('');
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [done, setDone] = useState('');
  const e = q.data?.event;
  const hooks = e?.webhooks ?? [];
  const deliveries = e?.webhookDeliveries.nodes ?? [];
  const urlOf = (id: string) => hooks.find((h) => h.id === id)?.url ?? id;
  return (
    <OrgPage slug={slug} title="Webhooks">
      <ErrorNote error={q.error} />
      <p class="muted">
        Each audited change of this event that a webhook listens to is POSTed to its URL as JSON, signed with its secret (header X-Verdict-Signature: sha256= HMAC-SHA256
        over delivery id, timestamp and body). Failed attempts are retried after 30 s, doubling; the eighth failure is final.
      </p>
      {q.loading && !q.data ? (
        <Loading />
      ) : hooks.length === 0 ? (
        <p class="muted">No webhooks yet.</p>
      ) : (
        <Table caption="Webhooks">
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Actions</th>
              <th scope="col">State</th>
              <th scope="col">Switch</th>
            </tr>
          </thead>
          <tbody>
            {hooks.map((h) => (
              <tr key={h.id}>
                <th scope="row">{h.url}</th>
                <td>{h.actions.length === 0 ? 'every action' : h.actions.join(', ')}</td>
                <td>{h.active ? 'active' : 'off'}</td>
                <td>
                  <button
                    type="button"
                    disabled={setActive.loading}
                    onClick={async () => {
                      setDone('');
                      const r = await setActive.run({ id: h.id, active: !h.active });
                      if (r) {
                        setDone(`${h.url} is ${r.setWebhookActive.active ? 'active' : 'off'}.`);
                        await q.refetch();
                      }
                    }}
                  >
                    {h.active ? `Switch off ${h.url}` : `Switch on ${h.url}`}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <ErrorNote error={setActive.error} />
      {secret && (
        <section aria-labelledby="secret-h">
          <h2 id="secret-h">Secret of {secret.url}</h2>
          <p>Copy it now: it is shown only this once.</p>
          <code data-testid="webhook-secret">{secret.secret}</code>
        </section>
      )}
      <form
        class="narrow"
        aria-labelledby="add-webhook-h"
        onSubmit={async (ev) => {
          ev.preventDefault();
          setDone('');
          setSecret(null);
          const list = actions
            .split(/[\s,]+/)
            .map((a) => a.trim())
            .filter((a) => a !== '');
          const r = await register.run({ event: slug, url: url.trim(), actions: list });
          if (r) {
            setSecret({ url: r.registerWebhook.webhook.url, secret: r.registerWebhook.secret });
            setDone(`Webhook ${r.registerWebhook.webhook.url} registered.`);
            setUrl('');
            setActions('');
            await q.refetch();
          }
        }}
      >
        <h2 id="add-webhook-h">Register a webhook</h2>
        <Field label="Receiver URL" required maxLength={2000} hint="http or https, on a public address." value={url} onValue={setUrl} />
        <Field label="Actions (optional)" hint="Prefixes of audit actions, e.g. project.submitted, vote; empty for every action." value={actions} onValue={setActions} />
        <ErrorNote error={register.error} />
        <Notice>{done}</Notice>
        <button type="submit" disabled={register.loading}>
          Register webhook
        </button>
      </form>
      <section aria-labelledby="log-h">
        <h2 id="log-h">Delivery log</h2>
        <ErrorNote error={retry.error} />
        {deliveries.length === 0 ? (
          <p class="muted">No deliveries yet.</p>
        ) : (
          <Table caption={`Deliveries, oldest first (${e?.webhookDeliveries.totalCount ?? 0})`}>
            <thead>
              <tr>
                <th scope="col">Action</th>
                <th scope="col">To</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Retry</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id}>
                  <th scope="row">
                    #{d.seq} {d.action}
                  </th>
                  <td>{urlOf(d.webhook)}</td>
                  <td>{d.status.toLowerCase()}</td>
                  <td>
                    {d.attempts.length === 0 ? (
                      'none yet'
                    ) : (
                      <ol>
                        {d.attempts.map((a) => (
                          <li key={a.attempt}>
                            {a.statusCode != null ? `HTTP ${a.statusCode}` : (a.error ?? 'no answer')} ({a.durationMs} ms)
                          </li>
                        ))}
                      </ol>
                    )}
                  </td>
                  <td>
                    {d.status === 'FAILED' ? (
                      <button
                        type="button"
                        disabled={retry.loading}
                        onClick={async () => {
                          const r = await retry.run({ id: d.id });
                          if (r) await q.refetch();
                        }}
                      >
                        Retry #{d.seq}
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <button type="button" onClick={() => q.refetch()}>
          Refresh the log
        </button>
      </section>
    </OrgPage>
  );
}
