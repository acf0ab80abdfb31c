//! The subscription root: streams fed by the in-process bus, after commits. A running
//! subscription re-checks its caller before each message ([`Watch`]).

use std::sync::Arc;
use std::time::Duration;

use async_graphql::{Context, ID, Subscription};
use entity::{event, result_publication};
use futures_util::Stream;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use tokio::sync::broadcast::error::RecvError;

use super::bus::BusEvent;
use super::context::{CtxExt, RequestCtx, Services};
use super::error::to_graphql;
use super::feed::{Following, Kind, Verdict};
use super::object::calibration::{CalibrationJob, Leaderboard};
use super::object::judging::JudgingProgress;
use super::object::project::Project;
use super::object::results::ResultPublication;
use super::policy::{FieldGuard, Rule, Scope};
use crate::calibrate::Stage;
use crate::domain::calibration_jobs::{self, Job, JobState};
use crate::error::{AppError, AppResult};

/// Who may follow each subscription, collected by [`super::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Subscription.projectSubmitted", Rule::Public),
    ("Subscription.resultsPublished", Rule::Public),
    // Checked against the event in the resolver: organizers only.
    ("Subscription.judgingProgress", Rule::SignedIn),
    ("Subscription.leaderboardUpdated", Rule::SignedIn),
    ("Subscription.calibrationJob", Rule::SignedIn),
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
        Ok(follow(services, e.id, watch, |_, ev| async move {
            let BusEvent::ProjectSubmitted { project, .. } = ev else {
                return None;
            };
            Some(Ok(Project(project.as_ref().clone())))
        }))
    }

    /// Every publication of the event's results, after it is committed (public). Computed
    /// once per publication and shared by every subscriber.
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
        let following = services
            .feeds
            .of::<Publications>()
            .follow(&services, &e, caller(ctx));
        Ok(from_feed(following, services, Watch::caller(ctx)))
    }

    /// Judging progress of the event, after each assignment (`assignJudge`, an applied
    /// `autoAssign`), recusal and saved review (organizers: UNAUTHENTICATED when anonymous,
    /// FORBIDDEN for anyone else). A burst of changes is computed once, within a quarter of
    /// a second, and every subscriber of the event receives that same computation.
    #[graphql(guard = "FieldGuard::new(\"Subscription\", Scope::none())")]
    async fn judging_progress(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
    ) -> async_graphql::Result<impl Stream<Item = async_graphql::Result<JudgingProgress>> + use<>>
    {
        let (services, e) = organizer_event(ctx, &event).await?;
        let following = services
            .feeds
            .of::<Progress>()
            .follow(&services, &e, caller(ctx));
        Ok(from_feed(following, services, Watch::organizer(ctx, e.id)))
    }

    /// The live leaderboard, recomputed after the same changes as `judgingProgress` and
    /// after each comparison recorded or revised (`compareProjects`) (organizers:
    /// UNAUTHENTICATED when anonymous, FORBIDDEN for anyone else). A burst of
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
        let following = services
            .feeds
            .of::<Leaderboards>()
            .follow(&services, &e, caller(ctx));
        Ok(from_feed(following, services, Watch::organizer(ctx, e.id)))
    }

    /// One calibration job of the event (`startCalibration`) until it ends (organizers:
    /// UNAUTHENTICATED when anonymous, FORBIDDEN for anyone else; NOT_FOUND when the event
    /// has no such job). The first message is the job as it stands; while it computes, its
    /// stage and steps at most four times a second (only from the server process computing
    /// it: another process sends its state); the last message is DONE or FAILED, and then
    /// the stream ends.
    #[graphql(guard = "FieldGuard::new(\"Subscription\", Scope::none())")]
    async fn calibration_job(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The job's id (`CalibrationJob.id`).")] job: ID,
    ) -> async_graphql::Result<impl Stream<Item = async_graphql::Result<CalibrationJob>> + use<>>
    {
        let (services, e) = organizer_event(ctx, &event).await?;
        let first = calibration_jobs::find(&services.db.conn, e.id, &job, services.db.origin())
            .await
            .map_err(|err| ctx.err(err))?
            .ok_or_else(|| ctx.err(AppError::NotFound("calibration job")))?;
        let state = JobFollower {
            bus: services.bus.subscribe(),
            services,
            watch: Watch::organizer(ctx, e.id),
            event_id: e.id,
            last: first.clone(),
            next: Some(first),
            sent: None,
        };
        Ok(futures_util::stream::unfold(
            Some(state),
            |state| async move {
                let mut state = state?;
                let item = state.next_message().await?;
                let ended = !matches!(&item, Ok(j) if j.job.state == JobState::Running);
                Some((item, (!ended).then_some(state)))
            },
        ))
    }
}

/// What a `calibrationJob` subscriber holds between messages.
struct JobFollower {
    services: super::Services,
    watch: Watch,
    bus: tokio::sync::broadcast::Receiver<BusEvent>,
    event_id: i64,
    /// The job as last read (its row changes only when the job ends).
    last: Job,
    /// The job as read and not yet sent.
    next: Option<Job>,
    /// The progress last sent.
    sent: Option<(Stage, u32, u32)>,
}

impl JobFollower {
    /// How often a subscriber of a job computing here looks at its progress.
    const TICK: std::time::Duration = std::time::Duration::from_millis(250);
    /// How often a subscriber of a job computing elsewhere reads it again, besides when
    /// the bus says a job of the event ended (so a stopped process is noticed).
    const REREAD: std::time::Duration = std::time::Duration::from_secs(5);

    /// The next message: the job when it moved on (checked against the caller first), or
    /// None when the subscriber is gone.
    async fn next_message(&mut self) -> Option<async_graphql::Result<CalibrationJob>> {
        loop {
            if let Some(job) = self.next.take() {
                if let Err(refused) = self.watch.check(&self.services).await {
                    return Some(Err(to_graphql(refused, self.watch.request_id())));
                }
                let message = CalibrationJob::with_progress(&self.services.calibrations, job);
                self.sent = message.progress;
                return Some(Ok(message));
            }
            let Some(job) = self.read_again().await else {
                continue;
            };
            match job {
                Ok(job) => {
                    self.last = job.clone();
                    self.next = Some(job);
                }
                Err(e) => return Some(Err(to_graphql(e, self.watch.request_id()))),
            }
        }
    }

    /// Waits until there may be something new: Some job when there is (its progress moved:
    /// the row as last read, which does not change while it runs; or it ended: the row
    /// read again), None to keep waiting.
    async fn read_again(&mut self) -> Option<Result<Job, AppError>> {
        if let Some(running) = self.services.calibrations.running(self.last.row.id) {
            let mut ended = running.ended.clone();
            tokio::select! {
                _ = ended.wait_for(|e| *e) => {}
                _ = tokio::time::sleep(Self::TICK) => {
                    let now = running.progress.read();
                    return (now != self.sent).then(|| Ok(self.last.clone()));
                }
            }
        } else {
            let ended = async {
                loop {
                    match self.bus.recv().await {
                        Ok(BusEvent::CalibrationEnded { event_id })
                            if event_id == self.event_id =>
                        {
                            return;
                        }
                        Err(RecvError::Closed) => std::future::pending::<()>().await,
                        _ => {}
                    }
                }
            };
            let _ = tokio::time::timeout(Self::REREAD, ended).await;
        }
        let db = &self.services.db;
        let id = &self.last.row.public_id;
        let job = match calibration_jobs::find(&db.conn, self.event_id, id, db.origin()).await {
            Ok(Some(job)) => job,
            Ok(None) => return Some(Err(AppError::NotFound("calibration job"))),
            Err(e) => return Some(Err(e)),
        };
        (job.state != JobState::Running).then_some(Ok(job))
    }
}

/// The signed-in caller of a subscription, as its feed checks them.
fn caller<'a>(
    ctx: &'a Context<'_>,
) -> Option<(
    &'a entity::user::Model,
    &'a crate::domain::accounts::Credential,
)> {
    ctx.rc().caller.as_ref().map(|(u, c)| (u, c))
}

/// A subscriber's stream of a shared feed: each snapshot the feed computes, if the feed's
/// verdict for this subscriber allows it (or, without a verdict, if `watch` does); when
/// it does not, the subscriber gets that error and the stream ends (unless `watch` could
/// not ask the database: then only that snapshot is withheld, as in [`follow`]). Ends with
/// the feed (which outlives every subscriber, so only on shutdown).
fn from_feed<T: Clone + Send + Sync + 'static>(
    following: Following<T>,
    services: super::Services,
    watch: Watch,
) -> impl Stream<Item = async_graphql::Result<T>> + use<T> {
    let state = Some((following, services, watch));
    futures_util::stream::unfold(state, |state| async move {
        let (mut following, services, watch) = state?;
        loop {
            following.updates.changed().await.ok()?;
            let Some(snapshot) = following.updates.borrow_and_update().clone() else {
                continue;
            };
            let refusal = match snapshot.verdicts.get(&following.id) {
                Some(Verdict::Allowed) => None,
                Some(Verdict::Unauthenticated) => Some(AppError::Unauthenticated),
                Some(Verdict::Forbidden) => Some(AppError::forbidden(
                    "only the event's organizers may follow this",
                )),
                // Boxed: inline, the check's database query would be part of every
                // idle subscriber's stream (5.9 KiB each; it is rarely asked).
                None => match Box::pin(watch.check(&services)).await {
                    Ok(()) => None,
                    // Not checked, so not sent; the subscriber hears why and follows on.
                    Err(e) if e.code() == "UNAVAILABLE" => {
                        let refused = to_graphql(e, watch.request_id());
                        return Some((Err(refused), Some((following, services, watch))));
                    }
                    Err(e) => Some(e),
                },
            };
            if let Some(e) = refusal {
                return Some((Err(to_graphql(e, watch.request_id())), None));
            }
            let item = snapshot.item.clone().map_err(|(code, detail)| {
                let err = if code == "UNAVAILABLE" {
                    AppError::Unavailable(detail)
                } else {
                    AppError::Internal(detail)
                };
                to_graphql(err, "subscription")
            });
            return Some((item, Some((following, services, watch))));
        }
    })
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

    /// The connection's request id, for the errors sent to it.
    fn request_id(&self) -> &str {
        self.rc
            .as_ref()
            .map_or("subscription", |rc| rc.request_id.as_str())
    }

    /// Whether the next message may go out; the refusal (which may also be that the
    /// database could not be asked: UNAVAILABLE) otherwise.
    async fn check(&self, services: &super::Services) -> Result<(), AppError> {
        let Some(rc) = &self.rc else {
            return match self.organizers_of {
                None => Ok(()),
                Some(_) => Err(AppError::Unauthenticated),
            };
        };
        rc.recheck(&services.db).await?;
        if let Some(event_id) = self.organizers_of {
            let access = rc.access(&services.db).await?;
            if !access.is_organizer(event_id) {
                return Err(AppError::forbidden(
                    "only the event's organizers may follow this",
                ));
            }
        }
        Ok(())
    }
}

/// A stream of the bus events of one event, each mapped by `f` (None skips it). Before each
/// message, `watch` is checked; when it fails the subscriber gets that error and the stream
/// ends, except when the database could not be asked (UNAVAILABLE): that message is not
/// sent, the subscriber gets the error, and the stream goes on. A lagging subscriber
/// receives an error saying how much it missed, never silence.
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
                    match watch.check(&services).await {
                        Ok(()) => {}
                        Err(e) if e.code() == "UNAVAILABLE" => {
                            let refused = to_graphql(e, watch.request_id());
                            return Some((Err(refused), Some((rx, services, watch, f))));
                        }
                        Err(e) => return Some((Err(to_graphql(e, watch.request_id())), None)),
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

// ---- the live feeds the subscriptions follow (see `super::feed`) --------------------

/// `judgingProgress`: counts that organizers watch fill in. Two statements per
/// computation; a review saved is seen within a quarter of a second.
pub struct Progress;

impl Kind for Progress {
    type Item = JudgingProgress;
    const QUIET: Duration = Duration::from_millis(100);
    const MAX_DELAY: Duration = Duration::from_millis(250);
    const ORGANIZERS_ONLY: bool = true;
    fn moves(ev: &BusEvent, event_id: i64) -> bool {
        matches!(ev, BusEvent::JudgingChanged { event_id: id } if *id == event_id)
    }
    async fn compute(services: &Services, e: &event::Model) -> AppResult<Option<Self::Item>> {
        Ok(Some(JudgingProgress::load(services, e).await?))
    }
}

/// `leaderboardUpdated`: a full calibration costs milliseconds to seconds of CPU, so a
/// single change reaches the organizers about half a second later, and a steady stream of
/// changes updates it every few seconds; a leaderboard that moves at the pace of human
/// judging does not notice.
pub struct Leaderboards;

impl Kind for Leaderboards {
    type Item = Leaderboard;
    const QUIET: Duration = Duration::from_millis(500);
    const MAX_DELAY: Duration = Duration::from_secs(3);
    const ORGANIZERS_ONLY: bool = true;
    fn moves(ev: &BusEvent, event_id: i64) -> bool {
        Progress::moves(ev, event_id)
    }
    async fn compute(services: &Services, e: &event::Model) -> AppResult<Option<Self::Item>> {
        Ok(Some(Leaderboard::load(services, e).await?))
    }
}

/// `resultsPublished`: the event's latest publication, sent as soon as it is committed.
pub struct Publications;

impl Kind for Publications {
    type Item = ResultPublication;
    const QUIET: Duration = Duration::ZERO;
    const MAX_DELAY: Duration = Duration::ZERO;
    const ORGANIZERS_ONLY: bool = false;
    fn moves(ev: &BusEvent, event_id: i64) -> bool {
        matches!(ev, BusEvent::ResultsPublished { event_id: id, .. } if *id == event_id)
    }
    async fn compute(services: &Services, e: &event::Model) -> AppResult<Option<Self::Item>> {
        let db = &services.db.conn;
        let Some(row) = result_publication::Entity::find()
            .filter(result_publication::Column::EventId.eq(e.id))
            .order_by_desc(result_publication::Column::Version)
            .one(db)
            .await?
        else {
            return Ok(None);
        };
        let run = services.parsed_runs.row(db, row.run_id).await?;
        Ok(run.map(|run| ResultPublication { row, run }))
    }
}
