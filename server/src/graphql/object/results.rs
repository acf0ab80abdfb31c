//! Results: signed calibration runs, the live leaderboard, publications and the frozen
//! public projection they carry, and the deployment's signing key. Calibrated rows are
//! matched back to projects and judges here (`ranked`, `judged`).

use std::sync::Arc;

use async_graphql::{Context, ID, Object};
use chrono::{DateTime, Utc};
use entity::{calibration_run, result_publication};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::project::Project;
use crate::calibrate::{CalibrationResult, Certainty, PlaceOdds, ProjectOut};
use crate::domain::results::{PublicationDocument, published_at_text};
use crate::graphql::connection::{Page, page_of_list};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::loaders::{EventId, LoadersExt, ProjectRef, Roster, maybe, one};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // Carries no judge data: reached by organizers through runs and the leaderboard, and
    // by everyone through published results.
    ("CalibratedProject.project", Rule::Public),
    ("CalibratedProject.projectExternalId", Rule::Public),
    ("CalibratedProject.reviews", Rule::Public),
    // A count, like `reviews`: which judge compared what stays with the organizers.
    ("CalibratedProject.comparisons", Rule::Public),
    ("CalibratedProject.rawMean", Rule::Public),
    ("CalibratedProject.rawRank", Rule::Public),
    ("CalibratedProject.quality", Rule::Public),
    ("CalibratedProject.stdError", Rule::Public),
    ("CalibratedProject.rank", Rule::Public),
    ("CalibratedProject.rankLow", Rule::Public),
    ("CalibratedProject.rankHigh", Rule::Public),
    ("CalibratedProject.excluded", Rule::Public),
    // Derived from the draws of the qualities only, no judge data: public once published.
    ("RankingCertainty.draws", Rule::Public),
    ("RankingCertainty.places", Rule::Public),
    ("RankingCertainty.pairs", Rule::Public),
    ("PlaceCertainty.entry", Rule::Public),
    ("PlaceCertainty.rank", Rule::Public),
    ("PlaceCertainty.probability", Rule::Public),
    ("PlaceCertainty.atLeast", Rule::Public),
    ("PairCertainty.better", Rule::Public),
    ("PairCertainty.worse", Rule::Public),
    ("PairCertainty.probability", Rule::Public),
    ("ResultPublication.id", Rule::Public),
    ("ResultPublication.version", Rule::Public),
    ("ResultPublication.final", Rule::Public),
    ("ResultPublication.publishedAt", Rule::Public),
    ("ResultPublication.runId", Rule::Public),
    ("ResultPublication.signature", Rule::Public),
    ("ResultPublication.results", Rule::Public),
    ("PublishedResults.version", Rule::Public),
    ("PublishedResults.final", Rule::Public),
    ("PublishedResults.publishedAt", Rule::Public),
    ("PublishedResults.publishedAtSigned", Rule::Public),
    ("PublishedResults.runId", Rule::Public),
    ("PublishedResults.inputsHash", Rule::Public),
    ("PublishedResults.resultHash", Rule::Public),
    ("PublishedResults.signature", Rule::Public),
    ("PublishedResults.publicationSignature", Rule::Public),
    ("PublishedResults.keyFingerprint", Rule::Public),
    ("PublishedResults.connected", Rule::Public),
    ("PublishedResults.ranking", Rule::Public),
    ("PublishedResults.rankingPage", Rule::Public),
    ("PublishedResults.certainty", Rule::Public),
    // A proof carries one project's public entry (the same numbers as `ranking`, plus
    // commitments to its pinned reviews that only the holders of the run's inputs can
    // recompute, from verdict.publication.v3 on) and the signed publication: public like
    // the results.
    ("PublishedResults.inclusionProof", Rule::Public),
    ("InclusionProof.projectExternalId", Rule::Public),
    ("InclusionProof.leafIndex", Rule::Public),
    ("InclusionProof.treeSize", Rule::Public),
    ("InclusionProof.entry", Rule::Public),
    ("InclusionProof.leafHash", Rule::Public),
    ("InclusionProof.auditPath", Rule::Public),
    ("InclusionProof.root", Rule::Public),
    ("InclusionProof.signedTag", Rule::Public),
    ("InclusionProof.publicationSignature", Rule::Public),
    ("InclusionProof.keyFingerprint", Rule::Public),
    ("InclusionProof.document", Rule::Public),
    ("SigningKey.algorithm", Rule::Public),
    ("SigningKey.publicKeyPem", Rule::Public),
    ("SigningKey.fingerprint", Rule::Public),
    ("Event.results", Rule::Public),
    ("Event.publications", Rule::Public),
];

/// Published results: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventResults(pub(super) super::event::EventRow);

/// Published results: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventResults {
    /// The latest published results: null until the organizers publish.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn results(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<PublishedResults>> {
        Ok(latest_publication(ctx, self.0.id)
            .await?
            .map(|p| p.results_of()))
    }
    /// Every publication, oldest first.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn publications(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<ResultPublication>> {
        let db = &ctx.db().conn;
        let rows = result_publication::Entity::find()
            .filter(result_publication::Column::EventId.eq(self.0.id))
            .order_by_asc(result_publication::Column::Version)
            .all(db)
            .await
            .gql(ctx)?;
        // Runs are immutable and shared: each is read once per process, not per request.
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let run = ctx
                .services()
                .parsed_runs
                .row(db, row.run_id)
                .await
                .gql(ctx)?;
            out.extend(run.map(|run| ResultPublication { row, run }));
        }
        Ok(out)
    }
}

/// The event's projects and judges by their calibration ids, loaded once per event for all
/// the fields of a request that need them.
pub(super) async fn roster(ctx: &Context<'_>, event_id: i64) -> async_graphql::Result<Arc<Roster>> {
    one(ctx, ctx.loaders().rosters(), EventId(event_id), "event").await
}

/// Every project of a result, in its order. Each entry points into the shared result, and
/// finds its project row only if `project` is asked for (batched through a loader).
pub(super) fn ranked(event_id: i64, r: &Arc<CalibrationResult>) -> Vec<CalibratedProject> {
    (0..r.projects.len())
        .map(|index| CalibratedProject::at(event_id, r, index))
        .collect()
}

/// One project's place in a calibrated ranking. Holds no judge data, so it is what the
/// public sees once results are published.
pub struct CalibratedProject {
    pub event_id: i64,
    result: Arc<CalibrationResult>,
    index: usize,
}

impl CalibratedProject {
    /// Entry `index` of `result`.
    pub(crate) fn at(event_id: i64, result: &Arc<CalibrationResult>, index: usize) -> Self {
        CalibratedProject {
            event_id,
            result: result.clone(),
            index,
        }
    }

    /// The project's row in the result, exactly as computed (and, for a run, signed).
    fn out(&self) -> &ProjectOut {
        &self.result.projects[self.index]
    }
}

/// The project of `event_id` with external id `external_id`, as it is now, if the caller
/// may see it (a project withdrawn after a run stays visible to its team and organizers
/// only); batched through a loader.
pub(crate) async fn visible_project(
    ctx: &Context<'_>,
    event_id: i64,
    external_id: &str,
) -> async_graphql::Result<Option<Project>> {
    let key = ProjectRef {
        event: event_id,
        external_id: external_id.to_owned(),
    };
    let Some(p) = maybe(ctx, ctx.loaders().projects_by_external_id(), key).await? else {
        return Ok(None);
    };
    let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
    Ok(access.can_see_project(&p).then_some(Project(p)))
}

/// One project's place in a calibrated ranking. Holds no judge data, so it is what the
/// public sees once results are published.
#[Object(guard = "FieldGuard::new(\"CalibratedProject\", Scope::event(self.event_id))")]
impl CalibratedProject {
    /// The project ranked, as it is now; null when the caller may no longer see it (it
    /// was withdrawn after the run: only its team and the organizers still see it).
    /// `projectExternalId` names it either way.
    async fn project(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        visible_project(ctx, self.event_id, &self.out().id).await
    }
    /// The project's external id exactly as the calibrated result names it (for a run,
    /// as signed: `result.json` of the exported bundle), also when `project` is null.
    async fn project_external_id(&self) -> &str {
        &self.out().id
    }
    /// Submitted reviews counted.
    async fn reviews(&self) -> i32 {
        self.out().reviews as i32
    }
    /// Judges' comparisons of the project with another that were counted (pairwise
    /// judging); null when the ranking was computed without comparisons (an event judged by
    /// scores only).
    async fn comparisons(&self) -> Option<i32> {
        self.out()
            .comparisons
            .map(|c| i32::try_from(c).unwrap_or(i32::MAX))
    }
    /// Mean of the weighted rubric totals (0..1), before calibration.
    async fn raw_mean(&self) -> Option<f64> {
        self.out().raw_mean
    }
    /// Rank by `rawMean` among the ranked projects (ties share the best rank), to compare
    /// with `rank`; null when the project is not ranked, or when some ranked project has
    /// only comparisons and no scores.
    async fn raw_rank(&self) -> Option<i32> {
        self.out().raw_rank.map(|r| r as i32)
    }
    /// Calibrated quality: judge severity removed; on the score scale (0..1) of an average
    /// judge, or, when the event has comparisons and no scores, on the log-odds scale of
    /// a comparison.
    async fn quality(&self) -> Option<f64> {
        self.out().quality
    }
    /// Standard error of `quality`; null when the project is not ranked or there are too
    /// few reviews to estimate it.
    async fn std_error(&self) -> Option<f64> {
        self.out().std_error
    }
    /// Calibrated rank, 1 = best (ties share the best rank); null when the project is not
    /// ranked (see `excluded`).
    async fn rank(&self) -> Option<i32> {
        self.out().rank.map(|r| r as i32)
    }
    /// Lower end of the 90% rank interval.
    async fn rank_low(&self) -> Option<i32> {
        self.out().rank_low.map(|r| r as i32)
    }
    /// Upper end of the 90% rank interval.
    async fn rank_high(&self) -> Option<i32> {
        self.out().rank_high.map(|r| r as i32)
    }
    /// Why it is not ranked (duplicate, not_submitted, no_usable_reviews, not_comparable).
    async fn excluded(&self) -> Option<&str> {
        self.out().excluded.as_deref()
    }
}

/// How certain the top of a ranking is (engine `verdict-calibrate/3` on): from draws of
/// the projects' qualities given the reviews, how often each of the first ten holds its
/// place and how often one beats another. No judge data.
pub struct RankingCertainty {
    event_id: i64,
    /// A result whose engine computed its certainty ([`RankingCertainty::of`]).
    result: Arc<CalibrationResult>,
}

/// What [`RankingCertainty::certainty`] falls back on (never, as `of` makes one only for a
/// result with a certainty).
static NO_CERTAINTY: Certainty = Certainty {
    draws: 0,
    places: Vec::new(),
    pairs: Vec::new(),
};

impl RankingCertainty {
    /// The result's certainty, if its engine computed one.
    pub(super) fn of(event_id: i64, result: &Arc<CalibrationResult>) -> Option<Self> {
        result.certainty.as_ref()?;
        Some(RankingCertainty {
            event_id,
            result: result.clone(),
        })
    }

    fn certainty(&self) -> &Certainty {
        self.result.certainty.as_ref().unwrap_or(&NO_CERTAINTY)
    }

    /// The ranking entry of the project with calibration id `id`.
    fn entry(&self, id: &str) -> Option<CalibratedProject> {
        let index = self.result.projects.iter().position(|p| p.id == id)?;
        Some(CalibratedProject::at(self.event_id, &self.result, index))
    }
}

/// How certain the top of a ranking is (engine `verdict-calibrate/3` on): from draws of
/// the projects' qualities given the reviews, how often each of the first ten holds its
/// place and how often one beats another. No judge data.
#[Object(guard = "FieldGuard::new(\"RankingCertainty\", Scope::event(self.event_id))")]
impl RankingCertainty {
    /// Posterior draws the probabilities are shares of (the run's `bootstrap`).
    async fn draws(&self) -> i32 {
        self.certainty().draws as i32
    }
    /// The first ten ranked projects in published order, each with the probability that
    /// its true rank is its published one ("first place is certain").
    async fn places(&self) -> Vec<PlaceCertainty> {
        self.certainty()
            .places
            .iter()
            .filter_map(|p| {
                Some(PlaceCertainty {
                    entry: self.entry(&p.project)?,
                    odds: p.clone(),
                })
            })
            .collect()
    }
    /// Every pair among `places`, the better-ranked first, with the probability that it
    /// is truly better ("second and third are a coin toss" when near 0.5).
    async fn pairs(&self) -> Vec<PairCertainty> {
        self.certainty()
            .pairs
            .iter()
            .filter_map(|p| {
                Some(PairCertainty {
                    better: self.entry(&p.better)?,
                    worse: self.entry(&p.worse)?,
                    probability: p.probability,
                })
            })
            .collect()
    }
}

/// One of the top places and how sure it is.
pub struct PlaceCertainty {
    entry: CalibratedProject,
    odds: PlaceOdds,
}

/// One of the top places and how sure it is.
#[Object(guard = "FieldGuard::new(\"PlaceCertainty\", Scope::event(self.entry.event_id))")]
impl PlaceCertainty {
    /// The project's entry in the ranking.
    async fn entry(&self) -> &CalibratedProject {
        &self.entry
    }
    /// Its published rank.
    async fn rank(&self) -> i32 {
        self.odds.rank as i32
    }
    /// Probability that its true rank is exactly `rank`.
    async fn probability(&self) -> f64 {
        self.odds.exact
    }
    /// Probability that its true rank is `rank` or better (it deserves at least this place).
    async fn at_least(&self) -> f64 {
        self.odds.at_least
    }
}

/// Two of the top projects and how sure their order is.
pub struct PairCertainty {
    better: CalibratedProject,
    worse: CalibratedProject,
    probability: f64,
}

/// Two of the top projects and how sure their order is.
#[Object(guard = "FieldGuard::new(\"PairCertainty\", Scope::event(self.better.event_id))")]
impl PairCertainty {
    /// The better-ranked of the two.
    async fn better(&self) -> &CalibratedProject {
        &self.better
    }
    /// The worse-ranked of the two.
    async fn worse(&self) -> &CalibratedProject {
        &self.worse
    }
    /// Probability that `better` is truly better than `worse`.
    async fn probability(&self) -> f64 {
        self.probability
    }
}

/// One publication of results: a version, provisional or final, pointing at a run.
#[derive(Clone)]
pub struct ResultPublication {
    pub row: result_publication::Model,
    /// Shared with every request that reads the run (see `ParsedRuns::row`).
    pub run: Arc<calibration_run::Model>,
}

/// One publication of results: a version, provisional or final, pointing at a run.
#[Object(
    guard = "FieldGuard::new(\"ResultPublication\", Scope { event: Some(self.row.event_id), public: true, ..Scope::none() })"
)]
impl ResultPublication {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.row.public_id.clone())
    }
    /// The publication's number in its event: 1 for the first, then counting up.
    async fn version(&self) -> i32 {
        self.row.version
    }
    /// Whether this publication is final; after a final one, nothing more is published.
    #[graphql(name = "final")]
    async fn is_final(&self) -> bool {
        self.row.is_final
    }
    /// When it was published.
    async fn published_at(&self) -> DateTime<Utc> {
        self.row.published_at
    }
    /// The id of the calibration run it publishes.
    async fn run_id(&self) -> ID {
        ID(self.run.public_id.clone())
    }
    /// Ed25519 signature (hex) over the publication's pre-image: `verdict.publication.v3`
    /// (with the Merkle root of its entries, whose reviews are salted commitments),
    /// `verdict.publication.v2` for publications whose entries hold plain review hashes,
    /// or `verdict.publication.v1` for publications made before results carried a root.
    async fn signature(&self) -> &str {
        &self.row.signature
    }
    /// The frozen public projection.
    async fn results(&self) -> PublishedResults {
        PublishedResults {
            row: self.row.clone(),
            run: self.run.clone(),
        }
    }
}

impl ResultPublication {
    pub fn results_of(self) -> PublishedResults {
        PublishedResults {
            row: self.row,
            run: self.run,
        }
    }
}

/// The frozen public projection of one run: no judge identity, no individual score.
pub struct PublishedResults {
    pub row: result_publication::Model,
    pub run: Arc<calibration_run::Model>,
}

/// The frozen public projection of one run: no judge identity, no individual score.
#[Object(
    guard = "FieldGuard::new(\"PublishedResults\", Scope { event: Some(self.row.event_id), public: true, ..Scope::none() })"
)]
impl PublishedResults {
    /// The publication's number in its event: 1 for the first, then counting up.
    async fn version(&self) -> i32 {
        self.row.version
    }
    /// Whether this publication is final; after a final one, nothing more is published.
    #[graphql(name = "final")]
    async fn is_final(&self) -> bool {
        self.row.is_final
    }
    /// When it was published.
    async fn published_at(&self) -> DateTime<Utc> {
        self.row.published_at
    }
    /// The exact timestamp string that was signed.
    async fn published_at_signed(&self) -> String {
        published_at_text(self.row.published_at)
    }
    /// The id of the calibration run it publishes.
    async fn run_id(&self) -> ID {
        ID(self.run.public_id.clone())
    }
    /// SHA-256 of the run's pinned canonical inputs.
    async fn inputs_hash(&self) -> &str {
        &self.run.inputs_hash
    }
    /// SHA-256 of the run's canonical result.
    async fn result_hash(&self) -> &str {
        &self.run.result_hash
    }
    /// The run's signature.
    async fn signature(&self) -> &str {
        &self.run.signature
    }
    /// The publication's own signature.
    async fn publication_signature(&self) -> &str {
        &self.row.signature
    }
    /// SHA-256 (hex) of the public key that signed the run; compare with
    /// `signingKey.fingerprint`.
    async fn key_fingerprint(&self) -> &str {
        &self.run.key_fingerprint
    }
    /// Whether the run's judge–project graph was one component; if not, only the largest
    /// component is ranked.
    async fn connected(&self) -> bool {
        self.run.connected
    }
    /// By rank; excluded projects last. Exactly the entries of the signed run's result,
    /// ranks and all, whatever happened to the projects since, except projects that were
    /// not submitted when the run was computed (drafts, withdrawn), which are not part of
    /// the public projection. A project withdrawn after the run keeps its signed place,
    /// named by `projectExternalId`; its `project` is null for those who no longer see it.
    #[graphql(complexity = "crate::graphql::cost::event_list(child_complexity)")]
    async fn ranking(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<CalibratedProject>> {
        self.public_ranking(ctx)
    }
    /// The same ranking as `ranking`, a page at a time with its total: what a results
    /// page of a large event asks for.
    #[graphql(complexity = "crate::graphql::cost::page(first, child_complexity)")]
    async fn ranking_page(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<CalibratedProject>> {
        let all = self.public_ranking(ctx)?;
        page_of_list(ctx, all, first, after)
    }
    /// How certain the top places are, as signed in the run: the probability that each of
    /// the first ten holds its place and that one beats another. Null for runs of engines
    /// before `verdict-calibrate/3`.
    #[graphql(complexity = "crate::graphql::cost::load(child_complexity)")]
    async fn certainty(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Option<RankingCertainty>> {
        let r = ctx.services().parsed_runs.get(&self.run).gql(ctx)?;
        Ok(RankingCertainty::of(self.row.event_id, &r))
    }
    /// The Merkle inclusion proof of one project's entry under this publication's signed
    /// root (RFC 6962 hashing; see `verdict results verify-proof`). Null when the project
    /// has no entry here (not submitted when the run was computed, or not of this event),
    /// and for publications made before results carried a root (`verdict.publication.v1`).
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn inclusion_proof(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or its external id (e.g. `prj_007`).")] project: ID,
    ) -> async_graphql::Result<Option<InclusionProof>> {
        if self.row.merkle_root.is_none() {
            return Ok(None);
        }
        let format = crate::domain::proofs::EntryFormat::of(self.row.entry_format);
        let tree = ctx
            .services()
            .parsed_runs
            .tree(&self.run, format)
            .gql(ctx)?;
        // An entry is named by the project's external id; a public id is looked up in
        // this event.
        let external = if tree.position(project.as_str()).is_some() {
            Some(project.to_string())
        } else {
            crate::domain::find_project(&ctx.db().conn, &project, Some(self.row.event_id))
                .await
                .gql(ctx)?
                // A public id names a project of any event: only this one's count.
                .filter(|p| p.event_id == self.row.event_id)
                .map(|p| p.external_id)
        };
        let Some(external) = external else {
            return Ok(None);
        };
        let event = one(
            ctx,
            ctx.loaders().events(),
            EventId(self.row.event_id),
            "event",
        )
        .await?;
        let key = ctx.services().signer.public();
        let document = PublicationDocument::of(&event.external_id, &self.row, &self.run);
        Ok(tree
            .prove(&external, document, &self.row.signature, &key.to_pem())
            .map(|proof| InclusionProof {
                event_id: self.row.event_id,
                proof,
                fingerprint: key.fingerprint(),
            }))
    }
}

/// One project's Merkle inclusion proof: everything a client needs to check, alone and
/// offline, that the entry is in the signed publication.
pub struct InclusionProof {
    event_id: i64,
    proof: crate::domain::proofs::InclusionProof,
    fingerprint: String,
}

/// One project's Merkle inclusion proof (RFC 6962): the entry, its leaf index, the tree
/// size, the audit path and the root, with the signed publication document the root is in.
/// `document` is all of it as one file, what `verdict results prove` writes and
/// `verdict results verify-proof` checks.
#[Object(
    guard = "FieldGuard::new(\"InclusionProof\", Scope { event: Some(self.event_id), public: true, ..Scope::none() })"
)]
impl InclusionProof {
    /// The project's external id, as the entry names it.
    async fn project_external_id(&self) -> &str {
        &self.proof.project
    }
    /// The entry's position among the leaves (ordered by project id), from 0.
    async fn leaf_index(&self) -> i64 {
        self.proof.leaf_index as i64
    }
    /// How many leaves the tree has.
    async fn tree_size(&self) -> i64 {
        self.proof.tree_size as i64
    }
    /// The entry, canonical JSON: project, commitments to its reviews (salted, see
    /// `signedTag`), its calibrated quality and standard error, its rank and the rank's
    /// 90% interval.
    async fn entry(&self) -> &str {
        &self.proof.entry
    }
    /// SHA-256 (hex) of the byte 0x00 followed by the entry.
    async fn leaf_hash(&self) -> String {
        hex::encode(crate::crypto::merkle::leaf_hash(
            self.proof.entry.as_bytes(),
        ))
    }
    /// The sibling hashes (hex) from the leaf up to the root: each step hashes 0x01, left,
    /// right.
    async fn audit_path(&self) -> &[String] {
        &self.proof.audit_path
    }
    /// The root (hex), as signed in the publication document.
    async fn root(&self) -> &str {
        &self.proof.root
    }
    /// The signature's domain tag: `verdict.publication.v3` (`.v2` for a publication whose
    /// entries hold plain review hashes).
    async fn signed_tag(&self) -> &str {
        self.proof.publication.tag()
    }
    /// The publication's Ed25519 signature (hex).
    async fn publication_signature(&self) -> &str {
        &self.proof.signature
    }
    /// SHA-256 (hex) of the public key the proof carries; compare with
    /// `signingKey.fingerprint`.
    async fn key_fingerprint(&self) -> &str {
        &self.fingerprint
    }
    /// The whole proof as one JSON file: the publication document, its signature, the
    /// public key (PEM), and the fields above.
    async fn document(&self) -> String {
        self.proof.to_file()
    }
}

impl PublishedResults {
    /// The run's entries in rank order, without projects that were not submitted when the
    /// run was computed.
    fn public_ranking(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<CalibratedProject>> {
        let r = ctx.services().parsed_runs.get(&self.run).gql(ctx)?;
        let mut all = ranked(self.row.event_id, &r);
        all.retain(|p| p.out().excluded.as_deref() != Some("not_submitted"));
        Ok(all)
    }
}

/// The deployment's public signing key.
pub struct SigningKey {
    pub pem: String,
    pub fingerprint: String,
}

/// The deployment's public signing key.
#[Object(guard = "FieldGuard::new(\"SigningKey\", Scope { public: true, ..Scope::none() })")]
impl SigningKey {
    /// Always `Ed25519`.
    async fn algorithm(&self) -> &str {
        "Ed25519"
    }
    /// The public key, SPKI PEM.
    async fn public_key_pem(&self) -> &str {
        &self.pem
    }
    /// SHA-256 (hex) of the raw 32-byte public key.
    async fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

/// The event's latest publication with the run it publishes; None until it publishes.
pub async fn latest_publication(
    ctx: &Context<'_>,
    event_id: i64,
) -> async_graphql::Result<Option<ResultPublication>> {
    // Through the request's loaders: loaded once per request however many fields ask.
    let Some(row) = maybe(ctx, ctx.loaders().latest_publication(), EventId(event_id)).await? else {
        return Ok(None);
    };
    let run = ctx
        .services()
        .parsed_runs
        .row(&ctx.db().conn, row.run_id)
        .await
        .gql(ctx)?;
    Ok(run.map(|run| ResultPublication { row, run }))
}
