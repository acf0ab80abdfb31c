// Who is signed in: the viewer, read once and shared through context; pages ask it for
// roles to decide what to show (the server still refuses what a role may not do).
import { createContext } from 'preact';
import type { ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { resetSocket, useQuery } from './api';
import { graphql, type ResultOf } from './graphql';

export const ViewerQuery = graphql(`
  query Viewer {
    viewer {
      user { id displayName email emailConfirmed isSiteAdmin }
      memberships { id role event { id slug name } }
    }
  }
`);

export type Viewer = NonNullable<ResultOf<typeof ViewerQuery>['viewer']>;
export type Role = Viewer['memberships'][number]['role'];

type Session = {
  viewer: Viewer | null;
  loading: boolean;
  /** Re-reads the viewer (after log-in, log-out or a role change) and re-opens the socket. */
  refresh: () => Promise<void>;
  rolesIn: (slug: string) => Role[];
};

const Ctx = createContext<Session>({ viewer: null, loading: true, refresh: async () => {}, rolesIn: () => [] });

export function SessionProvider({ children }: { children: ComponentChildren }) {
  const q = useQuery(ViewerQuery, {});
  const viewer = q.data?.viewer ?? null;
  const session: Session = {
    viewer,
    loading: q.loading && !q.data,
    refresh: async () => {
      resetSocket();
      await q.refetch();
    },
    rolesIn: (slug) => viewer?.memberships.filter((m) => m.event.slug === slug).map((m) => m.role) ?? [],
  };
  return <Ctx.Provider value={session}>{children}</Ctx.Provider>;
}

export function useSession(): Session {
  return useContext(Ctx);
}
