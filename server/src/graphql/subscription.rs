//! The subscription root: streams fed by the in-process bus, after commits. A running
//! subscription re-checks its caller before each message ([`Watch`]).

use std::sync::Arc;

use async_graphql::{Context, Subscription};
use entity::project;
use futures_util::Stream;
use sea_orm::EntityTrait;
use tokio::sync::broadcast::error::RecvError;

use super::bus::BusEvent;
use super::context::{CtxExt, RequestCtx};
use super::error::to_graphql;
use super::object::judging::JudgingProgress;
use super::object::project::Project;
use super::object::results::{Leaderboard, ResultPublication};
use super::policy::{FieldGuard, Rule, Scope};
use crate::error::AppError;

/// Who may follow each subscription, collected by [`super::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Subscription.projectSubmitted", Rule::Public),
    ("Subscription.resultsPublished", Rule::Public),
    // Checked against the event in the resolver: organizers only.
    ("Subscription.judgingProgress", Rule::SignedIn),
    ("Subscription.leaderboardUpdated", Rule::SignedIn),
];

#[derive(Default)]
pub struct Subscription;

/// Live streams of one event, over the websocket endpoint `/graphql/ws`: each message
/// follows a committed change. A subscriber that falls behind receives an error saying how
/// many messages it missed, and should resubscribe.
#[Subscription]
impl Subscription {
    /// Every project submitted to the event from now on (public).
    #[graphql(guard = "FieldGuard::new(\"Subscription\", Scope::none())")]
    async fn project_submitted(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
    ) -> async_graphql::Result<impl Stream<Item = async_graphql::Result<Project>> + use<>> {
        let services = ctx.services().clone();
        let e = crate::domain::event_by_slug(&services.db.conn, &event)
            .await
            .map_err(|e| ctx.err(e))?;
        let watch = Watch::caller(ctx);
        Ok(follow(services, e.id, watch, |services, ev| async move {
            let BusEvent::ProjectSubmitted { project_id, .. } = ev else {
                return None;
            };
            match project::Entity::find_by_id(project_id)
                .one(&services.db.conn)
                .await
            {
                Ok(Some(p)) => Some(Ok(Project(p))),
                Ok(None) => None,
                Err(err) => Some(Err(to_graphql(AppError::Db(err), "subscription"))),
            }
        }))
    }

    /// Every publication of the event's results, after it is committed (public).
    #[graphql(guard = "FieldGuard::new(\"Subscription\", Scope::none())")]
    async fn results_published(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
    ) -> async_graphql::Result<impl Stream<Item = async_graphql::Result<ResultPublication>> + use<>>
    {
        let services = ctx.services().clone();
        let e = crate::domain::event_by_slug(&services.db.conn, &event)
            .await
            .map_err(|e| ctx.err(e))?;
        let watch = Watch::caller(ctx);
        Ok(follow(services, e.id, watch, |services, ev| async move {
            let BusEvent::ResultsPublished { publication_id, .. } = ev else {
                return None;
            };
            let db = &services.db.conn;
            let row = match entity::result_publication::Entity::find_by_id(publication_id)
                .one(db)
                .await
            {
                Ok(Some(r)) => r,
                Ok(None) => return None,
                Err(err) => return Some(Err(to_graphql(AppError::Db(err), "subscription"))),
            };
            match entity::calibration_run::Entity::find_by_id(row.run_id)
                .one(db)
                .await
            {
                Ok(Some(run)) => Some(Ok(ResultPublication { row, run })),
                Ok(None) => None,
                Err(err) => Some(Err(to_graphql(AppError::Db(err), "subscription"))),
            }
        }))
    }

    /// Judging progress of the event, after each assignment (`assignJudge`, an applied
    /// `autoAssign`), recusal and saved review (organizers: UNAUTHENTICATED when anonymous,
    /// FORBIDDEN for anyone else).
    #[graphql(guard = "FieldGuard::new(\"Subscription\", Scope::none())")]
    async fn judging_progress(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
    ) -> async_graphql::Result<impl Stream<Item = async_graphql::Result<JudgingProgress>> + use<>>
    {
        let (services, e) = organizer_event(ctx, &event).await?;
        let watch = Watch::organizer(ctx, e.id);
        Ok(follow(services, e.id, watch, move |services, ev| {
            let e = e.clone();
            async move {
                let BusEvent::JudgingChanged { .. } = ev else {
                    return None;
                };
                Some(
                    JudgingProgress::load(&services.db.conn, &e)
                        .await
                        .map_err(|err| to_graphql(err, "subscription")),
                )
            }
        }))
    }

    /// The live leaderboard, recomputed after the same changes as `judgingProgress`
    /// (organizers: UNAUTHENTICATED when anonymous, FORBIDDEN for anyone else). A burst of
    /// changes is computed once, a few hundred milliseconds after it settles, and every
    /// subscriber of the event receives that same computation (the same `computedAt`). A
    /// subscriber that reads slowly skips to the newest leaderboard.
    #[graphql(guard = "FieldGuard::new(\"Subscription\", Scope::none())")]
    async fn leaderboard_updated(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
    ) -> async_graphql::Result<impl Stream<Item = async_graphql::Result<Leaderboard>> + use<>> {
        let (services, e) = organizer_event(ctx, &event).await?;
        let watch = Watch::organizer(ctx, e.id);
        let updates = services
            .leaderboards
            .subscribe(&services.db, &services.bus, &e);
        let state = Some((updates, services, watch));
        Ok(futures_util::stream::unfold(state, |state| async move {
            let (mut updates, services, watch) = state?;
            loop {
                // Ends when the feed does (it outlives every subscriber, so only on shutdown).
                updates.changed().await.ok()?;
                let Some(update) = updates.borrow_and_update().clone() else {
                    continue;
                };
                if let Err(refused) = watch.check(&services).await {
                    return Some((Err(refused), None));
                }
                let item =
                    update.map_err(|detail| to_graphql(AppError::Internal(detail), "subscription"));
                return Some((item, Some((updates, services, watch))));
            }
        }))
    }
}

/// The event, if the connection's user organizes it.
async fn organizer_event(
    ctx: &Context<'_>,
    slug: &str,
) -> async_graphql::Result<(super::Services, entity::event::Model)> {
    let services = ctx.services().clone();
    let e = crate::domain::event_by_slug(&services.db.conn, slug)
        .await
        .map_err(|e| ctx.err(e))?;
    let access = ctx
        .rc()
        .access(&services.db)
        .await
        .map_err(|e| ctx.err(e))?;
    if !access.is_organizer(e.id) {
        return Err(ctx.err(match ctx.rc().user() {
            None => AppError::Unauthenticated,
            Some(_) => AppError::forbidden("only the event's organizers may follow this"),
        }));
    }
    Ok((services, e))
}

/// What a running subscription re-checks before each message it sends: that the
/// connection's credential is still live and, for organizer-only subscriptions, that the
/// caller still organizes the event, from access loaded fresh. Within one process a
/// revocation also closes the connection (`http::ws`); across several processes sharing a
/// database, these checks are what holds.
struct Watch {
    rc: Option<Arc<RequestCtx>>,
    organizers_of: Option<i64>,
}

impl Watch {
    /// For a public subscription: the credential only.
    fn caller(ctx: &Context<'_>) -> Watch {
        Watch {
            rc: ctx.data_opt::<Arc<RequestCtx>>().cloned(),
            organizers_of: None,
        }
    }

    /// For an organizer-only subscription of the event.
    fn organizer(ctx: &Context<'_>, event_id: i64) -> Watch {
        Watch {
            organizers_of: Some(event_id),
            ..Watch::caller(ctx)
        }
    }

    async fn check(&self, services: &super::Services) -> async_graphql::Result<()> {
        let Some(rc) = &self.rc else {
            return match self.organizers_of {
                None => Ok(()),
                Some(_) => Err(to_graphql(AppError::Unauthenticated, "subscription")),
            };
        };
        let refused = |e| to_graphql(e, &rc.request_id);
        rc.recheck(&services.db).await.map_err(refused)?;
        if let Some(event_id) = self.organizers_of {
            let access = rc.access(&services.db).await.map_err(refused)?;
            if !access.is_organizer(event_id) {
                return Err(refused(AppError::forbidden(
                    "only the event's organizers may follow this",
                )));
            }
        }
        Ok(())
    }
}

/// A stream of the bus events of one event, each mapped by `f` (None skips it). Before each
/// message, `watch` is checked; when it fails the subscriber gets that error and the stream
/// ends. A lagging subscriber receives an error saying how much it missed, never silence.
fn follow<T, F, Fut>(
    services: super::Services,
    event_id: i64,
    watch: Watch,
    f: F,
) -> impl Stream<Item = async_graphql::Result<T>> + use<T, F, Fut>
where
    T: Send + 'static,
    F: Fn(super::Services, BusEvent) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Option<async_graphql::Result<T>>> + Send,
{
    let rx = services.bus.subscribe();
    let state = Some((rx, services, watch, f));
    futures_util::stream::unfold(state, move |state| async move {
        let (mut rx, services, watch, f) = state?;
        loop {
            let item = match rx.recv().await {
                Ok(ev) if ev.event_id() == Some(event_id) => {
                    if let Err(refused) = watch.check(&services).await {
                        return Some((Err(refused), None));
                    }
                    match f(services.clone(), ev).await {
                        Some(item) => item,
                        None => continue,
                    }
                }
                Ok(_) => continue,
                Err(RecvError::Lagged(n)) => Err(async_graphql::Error::new(format!(
                    "this subscriber fell behind and missed {n} messages; resubscribe"
                ))),
                Err(RecvError::Closed) => return None,
            };
            return Some((item, Some((rx, services, watch, f))));
        }
    })
}
