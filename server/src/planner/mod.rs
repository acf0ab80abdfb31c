//! Judge-assignment planner behind `autoAssign(event, k, maxLoad, seed, apply)`.
//!
//! Pure like [`crate::calibrate`]: no database, no async, no clock, no global randomness.
//! The caller (`domain::judging::auto_assign`, which reads the event through
//! `planner_input`) gathers the event's submitted, non-duplicate projects and its judges,
//! calls [`plan`], and either shows the [`Plan`] (dry run) or writes its `edges` as new
//! assignments.
//!
//! # API
//!
//! [`plan`]`(&[PlanProject], &[PlanJudge], k, max_load, seed) -> Plan`. A [`PlanProject`]
//! carries the project's track, team and already-assigned judges; a [`PlanJudge`] the
//! judge's tracks, teams, recusals and current load. The [`Plan`] holds the new
//! assignments only, one [`ProjectCoverage`] per project, every judge's load after the
//! plan, and the component count of the judge–project graph.
//!
//! # Guarantees
//!
//! - **Rules.** A new assignment pairs a judge only with a project in a track the judge
//!   covers (no tracks: any track), never with a project of a team the judge is on or
//!   recused from, never twice. Existing assignments count toward `k` and the load and
//!   are never moved; no judge is taken over `max_load`.
//! - **Coverage.** The useful new reviews are a maximum flow: what the level fill cannot
//!   place directly, augmenting paths repair, so no project is short if any set of
//!   assignments could fix it. Every shortfall is reported with its reason.
//! - **Balance.** Before connecting, the loads are an optimal semi-matching: the highest
//!   load is as low as it can be, and two judges who could take each other's work differ
//!   by at most one (the spread phase keeps this). Connecting trades a little of it at
//!   most: a redirect ends at most one above the balanced maximum, a bridge adds one
//!   review.
//! - **Connectivity.** Swaps, redirects and, within `max_load`, one extra bridging review
//!   join the judge–project graph into one component where that is possible, so that
//!   every judge's severity can be compared with every other's; what stays apart is
//!   reported in [`Plan::components`].
//! - **Determinism.** The same inputs and seed give the same plan, whatever the input
//!   order; the seed only breaks ties. Planning again with the plan applied adds nothing.
//! - **Total.** Never fails and never panics; duplicate ids are merged.
//!
//! # Algorithm
//!
//! The problem is a bipartite b-matching: every project wants `k` reviews (existing ones
//! count), every judge has a capacity `max_load - load`, and a (judge, project) pair is
//! usable once if the judge is eligible (track covered, not on the team, not recused,
//! not already assigned). Existing assignments are fixed; only new ones are ever moved.
//! The planner runs six phases:
//!
//! 1. **Level fill.** Passes over the projects, most constrained first (fewest eligible
//!    judges, then id); each pass gives one more review to every project at the lowest
//!    review count, so when capacity is scarce every project gets its first review
//!    before any gets its second. A review goes to the eligible judge with room that
//!    has the lowest load; ties go to the judge who has co-reviewed least with the
//!    project's current reviewers (spread), then to the seeded judge order.
//! 2. **Augmenting paths.** When no eligible judge has room, a BFS over alternating
//!    paths (project → eligible judge → a project that judge was newly given → another
//!    eligible judge → …) looks for a judge with room and shifts assignments along the
//!    path (counts change only at the ends). A project whose search fails can never be
//!    helped later, and neither can any judge its search reached (all full, and closed
//!    under the search), so those judges are pruned from later searches. The result is
//!    a maximum flow: no project is short if any set of assignments could fix it.
//! 3. **Load balancing.** Top load level first, a multi-source BFS from the judges at
//!    level `L` looks for an alternating path to a judge with load `≤ L - 2` and room,
//!    and moves one review along it (loads change only at the ends). When no such path
//!    exists for any level the loads are an optimal semi-matching: the maximum load is
//!    minimal and two judges who could take each other's work differ by at most one.
//! 4. **Spread.** A local search that keeps every project's count and the multiset of
//!    loads (so the balance) unchanged: swap the judges of two new edges, or hand a
//!    review to a judge exactly one below. It lowers the sum of cubed co-review counts
//!    over judge pairs, hottest pairs first, within a fixed work budget.
//! 5. **Connectivity.** While the judge–project graph (existing + new edges) has several
//!    components: swap the judges of two new edges in different components, at least
//!    one of them not a bridge (loads unchanged); else redirect a new edge to a judge
//!    of another component who is less loaded (then: equally loaded, ending at most one
//!    above the balanced maximum); else, if an eligible judge of another component has
//!    room under `max_load`, add one bridging review by the least-loaded such judge
//!    (that project gets more than `k`). Every change is verified to lower the
//!    component count; whatever is left is reported honestly in [`Plan::components`].
//! 6. **Report.** Coverage per project with a reason for every shortfall, loads, and the
//!    component count.
//!
//! Determinism: inputs are sorted and de-duplicated by id first, so input order never
//! matters; the seed only shuffles the judge order once (`calibrate::rng::SplitMix64`),
//! which breaks ties.
//! Idempotence: planning again with the plan applied (existing = old + new, loads
//! updated) adds nothing: the fill leaves no augmenting path, only new edges are ever
//! moved, and a bridge is only added while one exists, which depends only on loads and
//! edges that are then the same.
//!
//! # Files
//!
//! - `normalize.rs`: inputs to index space (merged duplicates, seeded judge order,
//!   eligibility lists).
//! - `graph.rs`: the graph being planned: edge moves, co-review counts, components and
//!   bridges (the union–find is `calibrate::dsu`, shared with calibration).
//! - `fill.rs`: phases 1–3 (level fill, augmenting paths, load balancing).
//! - `spread.rs`: phase 4. `connect.rs`: phase 5. `report.rs`: phase 6.
//! - `tests/`: invariants against independent references (max-flow, components).

mod connect;
mod fill;
mod graph;
mod normalize;
mod report;
mod spread;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use fill::Scratch;
use graph::Pairs;

/// Marker for "no parent" in the BFS trees.
const NONE: usize = usize::MAX;

/// A project to be reviewed: one submitted, non-duplicate project of the event.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanProject {
    /// Project id.
    pub id: String,
    /// Id of the track the project is entered in.
    pub track: String,
    /// Id of the team that submitted the project.
    pub team: String,
    /// Judge ids already assigned to this project (any status except recused). They count
    /// toward `k` and are never assigned again.
    #[serde(default)]
    pub existing: Vec<String>,
}

/// A judge of the event.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanJudge {
    /// Judge (user) id.
    pub id: String,
    /// Track ids the judge covers; empty means any track.
    #[serde(default)]
    pub tracks: Vec<String>,
    /// Teams the judge is a member of (normally empty); never assigned to their projects.
    #[serde(default)]
    pub team_ids: Vec<String>,
    /// Teams the judge is recused from; never assigned to their projects.
    #[serde(default)]
    pub recused_teams: Vec<String>,
    /// Current assignment count (existing assignments included).
    #[serde(default)]
    pub load: usize,
}

/// How well one project is covered after the plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectCoverage {
    /// Project id.
    pub project: String,
    /// Reviews after the plan: existing plus new.
    pub assigned: usize,
    /// The requested reviews per project (`k`).
    pub target: usize,
    /// How many reviews short of `target` the project is (0 when reached).
    pub shortfall: usize,
    /// Why the target could not be reached; `None` when there is no shortfall.
    pub reason: Option<String>,
}

/// The result of [`plan`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// New assignments only, as `(judge_id, project_id)`, sorted by project then judge.
    pub edges: Vec<(String, String)>,
    /// One entry per project, sorted by project id.
    pub coverage: Vec<ProjectCoverage>,
    /// `(judge_id, total load after the plan)` for every judge, sorted by judge id.
    pub loads: Vec<(String, usize)>,
    /// Connected components of the judge–project graph (existing + new edges), counting
    /// only projects with at least one review and judges with at least one assignment.
    pub components: usize,
    /// `components <= 1`: every judge's severity can be compared with every other's.
    pub connected: bool,
}

impl Plan {
    /// Total reviews still missing over all projects.
    pub fn total_shortfall(&self) -> usize {
        self.coverage
            .iter()
            .fold(0usize, |acc, c| acc.saturating_add(c.shortfall))
    }
}

/// Plans new judge assignments for one event.
///
/// * `projects`: the event's submitted, non-duplicate projects with their existing judges.
/// * `judges`: the event's judges with their tracks, conflicts and current loads.
/// * `k`: target reviews per project (existing reviews count).
/// * `max_load`: maximum total assignments per judge (existing ones count), if any.
/// * `seed`: breaks ties only; the same inputs and seed always give the same plan.
///
/// Never fails and never panics: what cannot be reached is reported per project in
/// [`Plan::coverage`]. Duplicate ids are merged (projects: smallest track/team, union of
/// existing; judges: union of tracks and conflicts, any-track if one entry says so,
/// largest load). Existing judge ids that are not in `judges` still count toward `k` and
/// toward the component count.
pub fn plan(
    projects: &[PlanProject],
    judges: &[PlanJudge],
    k: usize,
    max_load: Option<usize>,
    seed: u64,
) -> Plan {
    let mut planner = Planner::new(projects, judges, k, max_load, seed);
    planner.fill();
    planner.balance();
    planner.spread();
    planner.connect();
    planner.finish()
}

/// The plan under construction, in index space: projects in id order, judges in the
/// seeded order (`normalize.rs`); fields are shared by the phase files.
struct Planner {
    k: usize,
    max_load: Option<usize>,
    // Projects, in id order.
    p_id: Vec<String>,
    p_track: Vec<String>,
    /// Distinct existing judge ids per project (known or not).
    p_existing: Vec<usize>,
    /// Existing judges that are in the judge list, sorted by internal index.
    p_exist_known: Vec<Vec<usize>>,
    /// Existing judges that are not in the judge list (indices into an id table).
    p_exist_unknown: Vec<Vec<usize>>,
    n_unknown: usize,
    /// Judges eligible for a new assignment, ascending internal index.
    elig: Vec<Vec<usize>>,
    /// New reviews each project still wants.
    need: Vec<usize>,
    /// Visiting order: most constrained first.
    order: Vec<usize>,
    // Judges, in seeded order (the internal index is the tie-break rank).
    j_id: Vec<String>,
    load: Vec<usize>,
    cap: Vec<usize>,
    /// Projects each judge is eligible for, ascending.
    j_elig: Vec<Vec<usize>>,
    // The plan being built.
    new_on: Vec<Vec<usize>>,
    judge_new: Vec<Vec<usize>>,
    pairs: Pairs,
    /// Judges that no augmenting path can pass usefully.
    dead: Vec<bool>,
    /// Reviews placed by an augmenting path rather than directly (for tests).
    augmented: usize,
    scratch: Scratch,
}
