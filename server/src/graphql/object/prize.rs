//! Prizes and the podium derived from the published results (issue 12). Public: a prize,
//! its track and its winner are what an event announces.

use std::sync::Arc;

use async_graphql::{Context, Enum, ID, Object};
use entity::{calibration_run, prize};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::event::Track;
use super::project::Project;
use super::results::{CalibratedProject, latest_publication, visible_project};
use crate::calibrate::CalibrationResult;
use crate::domain::prizes::{self, Placement, Source, TopUp};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::loaders::{LoadersExt, ProjectId, TrackId, maybe};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Prize.id", Rule::Public),
    ("Prize.name", Rule::Public),
    ("Prize.description", Rule::Public),
    ("Prize.position", Rule::Public),
    ("Prize.track", Rule::Public),
    ("Prize.winner", Rule::Public),
    ("PodiumEntry.prize", Rule::Public),
    ("PodiumEntry.source", Rule::Public),
    ("PodiumEntry.projectExternalId", Rule::Public),
    ("PodiumEntry.project", Rule::Public),
    ("PodiumEntry.entry", Rule::Public),
    ("PodiumEntry.probability", Rule::Public),
    ("TopUpSuggestion.prize", Rule::Organizer),
    ("TopUpSuggestion.project", Rule::Organizer),
    ("TopUpSuggestion.entry", Rule::Organizer),
    ("TopUpSuggestion.straddlesCutOff", Rule::Organizer),
    ("TopUpSuggestion.thinCoverage", Rule::Organizer),
    ("Event.prizes", Rule::Public),
    ("Event.podium", Rule::Public),
    ("Event.topUpPlan", Rule::Organizer),
];

/// Prizes, the podium and the top-up plan: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventPrizes(pub(super) super::event::EventRow);

/// Prizes, the podium and the top-up plan: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventPrizes {
    /// The event's prizes: overall ones first, then by track and position.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn prizes(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Prize>> {
        let all = prizes::prizes_of(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(all.into_iter().map(Prize).collect())
    }
    /// Each prize's winner, from the latest published results only (empty before the first
    /// publication): the project at the prize's position (within its track for a track
    /// prize), or the winner the organizers assigned. Special awards appear once assigned.
    /// A prize never changes a run.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn podium(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<PodiumEntry>> {
        let Some(publication) = latest_publication(ctx, self.0.id).await? else {
            return Ok(Vec::new());
        };
        let result = ctx.services().parsed_runs.get(&publication.run).gql(ctx)?;
        let db = &ctx.db().conn;
        let all = prizes::prizes_of(db, self.0.id).await.gql(ctx)?;
        if all.is_empty() {
            return Ok(Vec::new());
        }
        let (track_of, external_of) = prizes::project_maps(db, self.0.id).await.gql(ctx)?;
        Ok(prizes::podium(&all, &result, &track_of, &external_of)
            .into_iter()
            .map(|p| PodiumEntry::new(self.0.id, &result, p))
            .collect())
    }
    /// Planning aid for organizers before publication, never a ranking: for each ranked
    /// prize not assigned by hand, the projects of the latest calibration run whose rank
    /// interval straddles the prize's cut-off (within its track for a track prize) or whose
    /// reviews are fewer than `reviewsPerProject` near it: where one more review would
    /// matter most. Straddling ones first, widest interval first. Empty before the first
    /// run.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn top_up_plan(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<TopUpSuggestion>> {
        let db = &ctx.db().conn;
        let latest = calibration_run::Entity::find()
            .filter(calibration_run::Column::EventId.eq(self.0.id))
            .order_by_desc(calibration_run::Column::Id)
            .one(db)
            .await
            .gql(ctx)?;
        let Some(run) = latest else {
            return Ok(Vec::new());
        };
        let all = prizes::prizes_of(db, self.0.id).await.gql(ctx)?;
        if all.is_empty() {
            return Ok(Vec::new());
        }
        let result = ctx.services().parsed_runs.get(&run).gql(ctx)?;
        let (track_of, _) = prizes::project_maps(db, self.0.id).await.gql(ctx)?;
        let target = u32::try_from(self.0.reviews_per_project).unwrap_or(0);
        Ok(prizes::top_up(&all, &result.projects, &track_of, target)
            .into_iter()
            .map(|t| TopUpSuggestion::new(self.0.id, &result, t))
            .collect())
    }
}

/// An award of an event: overall or within a track, at a position of the ranking (0 for a
/// special award), with the winner the organizers assigned, if any.
pub struct Prize(pub prize::Model);

/// An award of an event: overall or within a track, at a position of the ranking (0 for a
/// special award), with the winner the organizers assigned, if any.
#[Object(guard = "FieldGuard::new(\"Prize\", Scope::event(self.0.event_id))")]
impl Prize {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// Its name.
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// What it is for.
    async fn description(&self) -> &str {
        &self.0.description
    }
    /// The place of the ranking it goes to (1 = best), within its track for a track prize;
    /// 0 for a special award, which has a winner only when one is assigned.
    async fn position(&self) -> i32 {
        self.0.position
    }
    /// Its track; null for an overall prize.
    async fn track(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Track>> {
        let Some(id) = self.0.track_id else {
            return Ok(None);
        };
        Ok(maybe(ctx, ctx.loaders().tracks(), TrackId(id))
            .await?
            .map(Track))
    }
    /// The winner the organizers assigned; null when the podium derives it from the
    /// ranking (or the caller may no longer see the project).
    async fn winner(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        let Some(id) = self.0.winner_project_id else {
            return Ok(None);
        };
        let Some(p) = maybe(ctx, ctx.loaders().projects(), ProjectId(id)).await? else {
            return Ok(None);
        };
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        Ok(access.can_see_project(&p).then_some(Project(p)))
    }
}

/// How a podium entry came about.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
pub enum PodiumSource {
    /// The project at the prize's position in the published ranking.
    Derived,
    /// Assigned by the organizers.
    Assigned,
}

/// A prize and its winner, from the published results.
pub struct PodiumEntry {
    event_id: i64,
    result: Arc<CalibrationResult>,
    placement: Placement,
}

impl PodiumEntry {
    pub fn new(event_id: i64, result: &Arc<CalibrationResult>, placement: Placement) -> Self {
        PodiumEntry {
            event_id,
            result: result.clone(),
            placement,
        }
    }
}

/// A prize and its winner, from the published results.
#[Object(guard = "FieldGuard::new(\"PodiumEntry\", Scope::event(self.event_id))")]
impl PodiumEntry {
    /// The prize.
    async fn prize(&self) -> Prize {
        Prize(self.placement.prize.clone())
    }
    /// DERIVED from the ranking or ASSIGNED by the organizers.
    async fn source(&self) -> PodiumSource {
        match self.placement.source {
            Source::Derived => PodiumSource::Derived,
            Source::Assigned => PodiumSource::Assigned,
        }
    }
    /// The winner's external id, also when `project` is null.
    async fn project_external_id(&self) -> &str {
        &self.placement.project
    }
    /// The winner as it is now; null when the caller may no longer see it.
    async fn project(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        visible_project(ctx, self.event_id, &self.placement.project).await
    }
    /// The winner's entry in the published ranking (rank, interval); null for an assigned
    /// winner the run did not rank.
    async fn entry(&self) -> Option<CalibratedProject> {
        self.placement
            .index
            .map(|i| CalibratedProject::at(self.event_id, &self.result, i))
    }
    /// For a derived overall prize among the first ten places: the probability that the
    /// winner truly holds that place (from the run's posterior draws); null otherwise.
    async fn probability(&self) -> Option<f64> {
        let p = &self.placement;
        if p.source != Source::Derived || p.prize.track_id.is_some() {
            return None;
        }
        let place = self
            .result
            .certainty
            .as_ref()?
            .places
            .iter()
            .find(|x| x.project == p.project)?;
        Some(place.exact)
    }
}

/// A planning aid, never a ranking: a project near a prize's cut-off in the latest
/// calibration run, where one more review would matter most before publication.
pub struct TopUpSuggestion {
    event_id: i64,
    result: Arc<CalibrationResult>,
    top_up: TopUp,
}

impl TopUpSuggestion {
    pub fn new(event_id: i64, result: &Arc<CalibrationResult>, top_up: TopUp) -> Self {
        TopUpSuggestion {
            event_id,
            result: result.clone(),
            top_up,
        }
    }
}

/// A planning aid, never a ranking: a project near a prize's cut-off in the latest
/// calibration run, where one more review would matter most before publication.
#[Object(guard = "FieldGuard::new(\"TopUpSuggestion\", Scope::event(self.event_id))")]
impl TopUpSuggestion {
    /// The prize whose cut-off it is near.
    async fn prize(&self) -> Prize {
        Prize(self.top_up.prize.clone())
    }
    /// The project; null when the caller may no longer see it.
    async fn project(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        let id = &self.result.projects[self.top_up.index].id;
        visible_project(ctx, self.event_id, id).await
    }
    /// Its entry in the run: rank, 90 % rank interval, usable reviews.
    async fn entry(&self) -> CalibratedProject {
        CalibratedProject::at(self.event_id, &self.result, self.top_up.index)
    }
    /// Its rank interval holds places on both sides of the prize's cut-off: the run cannot
    /// tell whether it wins.
    async fn straddles_cut_off(&self) -> bool {
        self.top_up.straddles
    }
    /// It has fewer usable reviews than the event asks for (`reviewsPerProject`) and its
    /// interval reaches the cut-off.
    async fn thin_coverage(&self) -> bool {
        self.top_up.thin
    }
}
