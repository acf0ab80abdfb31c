//! A judge's pairwise route: the projects they walk to, in order, and the next pair they
//! are asked about (`Event.myNextComparison`).
//!
//! **The round.** Every project in the event's gallery (submitted, neither hidden nor
//! marked a duplicate: what the planner plans for, less what judges cannot read) stands
//! in one round of the expo floor: the projects with a table in natural table order
//! ([`super::super::tables::natural_cmp`]: "A2" before "A10"), then those without a table
//! in a stable order of their own (a hash of their id). Walking the round, the next
//! project is the table beside the last one.
//!
//! **Spread.** Every judge walks the same round, starting at a different point: the
//! event's judges, in a stable order (a hash of their membership id), start evenly spaced
//! around it, judge `i` of `J` at project `i·N/J`. So at any time the judges are spread
//! over the floor rather than queued at table 1, and the comparisons made so far cover the
//! projects evenly: after each judge has made `m` comparisons, every project has been seen
//! by about `J·m/N` judges, the most even that `J·m` visits allow. (The assignment planner,
//! `crate::planner`, solves a different problem: a fixed number of reviews per project
//! under load limits; a route has no fixed length, so even spacing on one round is all the
//! spreading it needs.) A judge's route is the round from their start, less the projects
//! they may not judge: their own team's, those of teams they are recused from, and those of
//! tracks they do not cover; and less the projects of tracks judged by scores only (see
//! `super::pairwise`): a route is empty in an event judged by scores.
//!
//! **The next pair.** A project is *visited* once the judge has compared it or skipped it.
//! The previous project is the one the judge was last at: the current project of their
//! latest comparison (revisions do not move it), or the project the client names as `seen`
//! (the first of the route, which there is nothing to compare with yet). The current
//! project is one of the first [`WINDOW`] unvisited projects after the previous on the
//! route, going round (from the judge's start when there is no previous: the first of
//! them): the one whose comparison with the previous project tells most about the ranking,
//! given every comparison of the event so far ([`crate::calibrate::pairing`]: a quick
//! Bradley–Terry estimate, and the Fisher information of the pair times the variance of
//! their difference), the nearest of equals. So the judge still walks a few tables at most,
//! but skips a project the others already know well for one they know little, or a clear
//! mismatch for a close call; while nothing tells the candidates apart (nobody has compared
//! them yet) the judge walks table by table. None is left: the route is done.
//!
//! Why: walking table by table, every judge compares the same neighbours (judges who start
//! near each other walk over the same stretch), so the comparisons make a chain, each pair
//! compared several times, each project against only its two neighbours. Measured on
//! Gavel-like panels (`calibrate::pairing_study`, 200 projects, 40 judges × 15–25
//! comparisons, two of them clicking at random; the engine's v6 fit; run with `cargo test
//! --release -p verdict --lib pairs_by_policy -- --ignored --nocapture --test-threads 1`;
//! the table is in `calibrate`'s module doc), walking table by table gave Kendall τ 0.572
//! (4 panels, 0.554–0.583), random pairs 0.630 with 51 tables walked per comparison, and
//! this choice among the next 5 (*gain 5*) 0.636 (0.586–0.683, above the walk on every
//! panel) with 2.7 tables per comparison.
//!
//! Cost of a next pair: one more query (the event's comparisons, two ids each) and
//! `pairing::SWEEPS` passes over them (microseconds for thousands of comparisons); no
//! per-request calibration.

use std::collections::{HashMap, HashSet};

use entity::{comparison, comparison_skip, event, membership, project, recusal, team_member};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::pairwise::ComparisonTracks;
use crate::calibrate::pairing::Estimate;
use crate::domain::judges::judges_of_event;
use crate::domain::{json_ids, tables};
use crate::error::{AppError, AppResult};

/// The domain of the hashes that order a round's untabled projects and the judges' starts.
const ROUTE_HASH: &str = "verdict.route.v1";

/// How many unvisited projects ahead of the judge their next project is chosen among: few,
/// so that they walk a few tables at most.
pub const WINDOW: usize = 5;

/// The pair a judge is asked about next.
#[derive(Clone, Debug)]
pub struct NextPair {
    /// The judge's membership.
    pub judge: membership::Model,
    /// The project the judge was at before; `None` at the start of the route.
    pub previous: Option<project::Model>,
    /// The project to compare with it.
    pub current: project::Model,
    /// Unvisited projects left on the route, `current` included.
    pub remaining: usize,
}

/// The event's round: projects with a table in natural table order, then the others in a
/// stable order of their own.
pub fn round(projects: Vec<project::Model>) -> Vec<project::Model> {
    let (mut tabled, mut rest): (Vec<_>, Vec<_>) =
        projects.into_iter().partition(|p| p.expo_table.is_some());
    tabled.sort_by(|a, b| {
        tables::natural_cmp(
            a.expo_table.as_deref().unwrap_or_default(),
            b.expo_table.as_deref().unwrap_or_default(),
        )
        .then(a.id.cmp(&b.id))
    });
    rest.sort_by_cached_key(|p| {
        crate::crypto::sha256_fields(ROUTE_HASH, &[p.public_id.as_bytes()])
    });
    tabled.extend(rest);
    tabled
}

/// Where judge `index` of `judges` starts on a round of `n` projects: evenly spaced.
pub fn start(index: usize, judges: usize, n: usize) -> usize {
    if judges == 0 || n == 0 {
        0
    } else {
        index * n / judges % n
    }
}

/// The judge's route: the event's round from the judge's start, less the projects they
/// may not judge (see the module doc).
pub async fn route<C: ConnectionTrait>(
    db: &C,
    e: &event::Model,
    judge: &membership::Model,
) -> AppResult<Vec<project::Model>> {
    let takes = ComparisonTracks::of(db, e).await?;
    if takes.is_empty() {
        return Ok(vec![]);
    }
    let mut round = round(project::Entity::find_gallery(e.id).all(db).await?);
    let mut judges: Vec<String> = judges_of_event(db, e.id)
        .await?
        .into_iter()
        .map(|j| crate::crypto::sha256_fields(ROUTE_HASH, &[j.public_id.as_bytes()]))
        .collect();
    judges.sort();
    let mine = crate::crypto::sha256_fields(ROUTE_HASH, &[judge.public_id.as_bytes()]);
    let index = judges.iter().position(|j| *j == mine).unwrap_or(0);
    let n = round.len();
    round.rotate_left(start(index, judges.len(), n));
    let tracks = json_ids(&judge.judge_tracks);
    let teams: HashSet<i64> = team_member::Entity::find()
        .filter(team_member::Column::EventId.eq(e.id))
        .filter(team_member::Column::UserId.eq(judge.user_id))
        .all(db)
        .await?
        .into_iter()
        .map(|m| m.team_id)
        .collect();
    let recused: HashSet<i64> = recusal::Entity::find()
        .filter(recusal::Column::JudgeId.eq(judge.id))
        .all(db)
        .await?
        .into_iter()
        .map(|r| r.team_id)
        .collect();
    round.retain(|p| {
        takes.take(p)
            && (tracks.is_empty() || tracks.contains(&p.track_id))
            && !teams.contains(&p.team_id)
            && !recused.contains(&p.team_id)
    });
    Ok(round)
}

/// The judge's comparisons, oldest first.
pub async fn comparisons_of<C: ConnectionTrait>(
    db: &C,
    judge_id: i64,
) -> AppResult<Vec<comparison::Model>> {
    Ok(comparison::Entity::find()
        .filter(comparison::Column::JudgeId.eq(judge_id))
        .order_by_asc(comparison::Column::Id)
        .all(db)
        .await?)
}

/// The projects the judge has compared or skipped.
async fn visited<C: ConnectionTrait>(
    db: &C,
    judge_id: i64,
    compared: &[comparison::Model],
) -> AppResult<HashSet<i64>> {
    let mut out: HashSet<i64> = compared
        .iter()
        .flat_map(|c| [c.better_id, c.worse_id])
        .collect();
    out.extend(
        comparison_skip::Entity::find()
            .filter(comparison_skip::Column::JudgeId.eq(judge_id))
            .all(db)
            .await?
            .into_iter()
            .map(|s| s.project_id),
    );
    Ok(out)
}

/// The project the judge was last at: the current project of their latest comparison.
pub fn last_seen(compared: &[comparison::Model]) -> Option<i64> {
    compared.iter().max_by_key(|c| c.id).map(|c| c.current_id)
}

/// The first [`WINDOW`] unvisited projects after position `from` of `route` (from its start
/// when `None`), going round, nearest first; and how many are unvisited.
pub fn ahead<'a>(
    route: &'a [project::Model],
    from: Option<usize>,
    visited: &HashSet<i64>,
) -> (Vec<&'a project::Model>, usize) {
    let n = route.len();
    let first = from.map_or(0, |k| k + 1);
    let remaining = route.iter().filter(|p| !visited.contains(&p.id)).count();
    let window = (0..n)
        .map(|step| &route[(first + step) % n.max(1)])
        .filter(|p| !visited.contains(&p.id))
        .take(WINDOW)
        .collect();
    (window, remaining)
}

/// Among `candidates`, the one whose comparison with project `previous` tells most about the
/// ranking given `comparisons` (`(better, worse)` project ids), by
/// [`crate::calibrate::pairing`]; the first of equals.
pub fn most_informative<'a>(
    comparisons: &[(i64, i64)],
    previous: i64,
    candidates: &[&'a project::Model],
) -> Option<&'a project::Model> {
    // Indices in order of first appearance: the same comparisons give the same estimate.
    let mut index: HashMap<i64, usize> = HashMap::new();
    let mut at = |id: i64| {
        let next = index.len();
        *index.entry(id).or_insert(next)
    };
    let pairs: Vec<(usize, usize)> = comparisons
        .iter()
        .map(|&(better, worse)| (at(better), at(worse)))
        .collect();
    let previous = at(previous);
    let local: Vec<usize> = candidates.iter().map(|p| at(p.id)).collect();
    let best = Estimate::fit(index.len(), &pairs).most_informative(previous, &local)?;
    let k = local.iter().position(|&c| c == best)?;
    candidates.get(k).copied()
}

/// Every comparison of the event as `(better, worse)` project ids, oldest first.
async fn event_comparisons<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
) -> AppResult<Vec<(i64, i64)>> {
    Ok(comparison::Entity::find()
        .select_only()
        .column(comparison::Column::BetterId)
        .column(comparison::Column::WorseId)
        .filter(comparison::Column::EventId.eq(event_id))
        .order_by_asc(comparison::Column::Id)
        .into_tuple()
        .all(db)
        .await?)
}

/// The pair `judge` is asked about next in `e`; `None` once every project of their route
/// is visited. `seen`, a project id or external id, names the project the judge was at
/// (BAD_USER_INPUT naming `seen` unless it is on their route).
pub async fn next_pair<C: ConnectionTrait>(
    db: &C,
    e: &event::Model,
    judge: &membership::Model,
    seen: Option<&str>,
) -> AppResult<Option<NextPair>> {
    let route = route(db, e, judge).await?;
    let compared = comparisons_of(db, judge.id).await?;
    let mut visited = visited(db, judge.id, &compared).await?;
    let previous = match seen {
        Some(id) => {
            let k = route
                .iter()
                .position(|p| p.public_id == id || p.external_id == id)
                .ok_or_else(|| AppError::bad_input("seen", "this project is not on your route"))?;
            visited.insert(route[k].id);
            Some(k)
        }
        None => last_seen(&compared).and_then(|id| route.iter().position(|p| p.id == id)),
    };
    let (window, remaining) = ahead(&route, previous, &visited);
    let current = match previous {
        Some(k) if window.len() > 1 => {
            let comparisons = event_comparisons(db, e.id).await?;
            most_informative(&comparisons, route[k].id, &window)
        }
        _ => window.first().copied(),
    };
    Ok(current.map(|current| NextPair {
        judge: judge.clone(),
        previous: previous.map(|k| route[k].clone()),
        current: current.clone(),
        remaining,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(id: i64, table: Option<&str>) -> project::Model {
        project::Model {
            id,
            public_id: format!("prj_{id}"),
            event_id: 1,
            team_id: id,
            track_id: 1,
            external_id: format!("p{id}"),
            title: String::new(),
            tagline: String::new(),
            summary: String::new(),
            description: String::new(),
            repo_url: String::new(),
            demo_url: String::new(),
            tags: "[]".into(),
            status: project::ProjectStatus::Submitted,
            submitted_at: None,
            duplicate_of: None,
            created_at: Default::default(),
            updated_at: Default::default(),
            hidden_reason: None,
            disqualified_reason: None,
            expo_table: table.map(str::to_owned),
        }
    }

    #[test]
    fn the_round_walks_tables_in_natural_order_then_the_rest() {
        let r = round(vec![
            project(1, Some("A10")),
            project(2, None),
            project(3, Some("a2")),
            project(4, Some("B1")),
            project(5, Some("A9")),
        ]);
        let tables: Vec<Option<&str>> = r.iter().map(|p| p.expo_table.as_deref()).collect();
        assert_eq!(
            tables,
            [Some("a2"), Some("A9"), Some("A10"), Some("B1"), None]
        );
    }

    #[test]
    fn judges_start_evenly_spaced() {
        assert_eq!(
            (0..4).map(|i| start(i, 4, 12)).collect::<Vec<_>>(),
            [0, 3, 6, 9]
        );
        assert_eq!(
            (0..3).map(|i| start(i, 3, 2)).collect::<Vec<_>>(),
            [0, 0, 1]
        );
        assert_eq!(start(0, 0, 5), 0);
        assert_eq!(start(2, 3, 0), 0);
    }

    #[test]
    fn the_candidates_are_the_first_unvisited_after_the_last_going_round() {
        let route: Vec<_> = (1..=8).map(|i| project(i, None)).collect();
        let visited: HashSet<i64> = [2, 4].into();
        let next = |from| {
            let (window, left) = ahead(&route, from, &visited);
            (window.iter().map(|p| p.id).collect::<Vec<_>>(), left)
        };
        assert_eq!(next(None), (vec![1, 3, 5, 6, 7], 6));
        assert_eq!(next(Some(0)), (vec![3, 5, 6, 7, 8], 6));
        // Past the end it goes round.
        assert_eq!(next(Some(6)), (vec![8, 1, 3, 5, 6], 6));
        let all: HashSet<i64> = (1..=8).collect();
        assert!(ahead(&route, Some(1), &all).0.is_empty());
        assert!(ahead(&[], None, &HashSet::new()).0.is_empty());
    }

    #[test]
    fn the_next_project_is_the_nearest_unless_another_tells_more() {
        let route: Vec<_> = (1..=6).map(|i| project(i, None)).collect();
        let window: Vec<&project::Model> = route[1..].iter().collect();
        let pick =
            |comparisons: &[(i64, i64)]| most_informative(comparisons, 1, &window).map(|p| p.id);
        // Nothing tells the candidates apart: the nearest.
        assert_eq!(pick(&[]), Some(2));
        // Others compared 1 and 2 again and again, and 3 lost to everything it met: 4, whom
        // nobody has compared, tells more.
        let known = [(1, 2), (2, 1), (1, 2), (2, 1), (5, 3), (6, 3), (2, 3)];
        assert_eq!(pick(&known), Some(4));
        assert_eq!(most_informative(&known, 1, &[]), None);
    }

    #[test]
    fn every_project_is_seen_about_equally_often() {
        // 12 judges, 40 projects, each judge walks 10 (the first and its 9 comparisons):
        // evenly spaced starts give every project 3 visits.
        let (judges, n, walk) = (12, 40, 10);
        let mut seen = vec![0; n];
        for j in 0..judges {
            for step in 0..walk {
                seen[(start(j, judges, n) + step) % n] += 1;
            }
        }
        assert!(seen.iter().all(|&s| s == 3), "{seen:?}");
    }
}
