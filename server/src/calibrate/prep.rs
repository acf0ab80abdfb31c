//! Input normalisation: sort and deduplicate ids, drop unusable reviews,
//! find the connected components of the review graph.
//!
//! Everything downstream works on dense indices into the sorted id lists, so
//! the input order of projects, judges and reviews never matters.

use super::MAX_ABS_SCORE;
use super::dsu::Dsu;
use super::types::CalibrationInput;

/// A usable review in index space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rev {
    pub p: usize,
    pub j: usize,
    pub y: f64,
}

pub(crate) struct Prepared {
    /// Sorted, deduplicated project ids.
    pub project_ids: Vec<String>,
    /// Upstream exclusion reason per project.
    pub upstream_excluded: Vec<Option<String>>,
    /// Sorted, deduplicated judge ids.
    pub judge_ids: Vec<String>,
    /// Usable reviews on every project (excluded ones included), sorted by
    /// (project, judge, score).
    pub all_reviews: Vec<Rev>,
    /// Reviews ignored: unknown judge/project or non-finite score.
    pub ignored: u32,
}

impl Prepared {
    pub fn new(input: &CalibrationInput) -> Self {
        // Projects: sort by (id, excluded) so that a duplicated id resolves to
        // the same entry whatever the input order (None sorts first).
        let mut projects: Vec<(&str, Option<&str>)> = input
            .projects
            .iter()
            .map(|p| (p.id.as_str(), p.excluded.as_deref()))
            .collect();
        projects.sort();
        projects.dedup_by(|a, b| a.0 == b.0);
        let project_ids: Vec<String> = projects.iter().map(|p| p.0.to_string()).collect();
        let upstream_excluded = projects.iter().map(|p| p.1.map(str::to_string)).collect();

        let mut judge_ids: Vec<String> = input.judges.iter().map(|j| j.id.clone()).collect();
        judge_ids.sort();
        judge_ids.dedup();

        let mut all_reviews = Vec::with_capacity(input.reviews.len());
        let mut ignored = 0u32;
        for r in &input.reviews {
            let p = project_ids.binary_search_by(|id| id.as_str().cmp(&r.project));
            let j = judge_ids.binary_search_by(|id| id.as_str().cmp(&r.judge));
            match (p, j) {
                (Ok(p), Ok(j)) if r.score.is_finite() && r.score.abs() <= MAX_ABS_SCORE => {
                    all_reviews.push(Rev { p, j, y: r.score })
                }
                _ => ignored = ignored.saturating_add(1),
            }
        }
        all_reviews.sort_by(|a, b| (a.p, a.j).cmp(&(b.p, b.j)).then(a.y.total_cmp(&b.y)));

        Prepared {
            project_ids,
            upstream_excluded,
            judge_ids,
            all_reviews,
            ignored,
        }
    }

    /// Reviews that may enter the model: those on projects not excluded
    /// upstream.
    pub fn candidate_reviews(&self) -> Vec<Rev> {
        self.all_reviews
            .iter()
            .filter(|r| self.upstream_excluded[r.p].is_none())
            .copied()
            .collect()
    }
}

pub(crate) struct Components {
    /// Number of components among nodes with at least one review.
    pub count: u32,
    /// Membership in the component that gets ranked.
    pub project_in_main: Vec<bool>,
    pub judge_in_main: Vec<bool>,
}

/// Connected components of the bipartite judge–project graph.
///
/// The ranked ("main") component is the one with the most projects, then
/// the most reviews, then the smallest project id: only projects linked
/// through chains of shared judges have comparable calibrated scores.
pub(crate) fn components(np: usize, nj: usize, reviews: &[Rev]) -> Components {
    let mut dsu = Dsu::new(np + nj);
    let mut has_review = vec![false; np + nj];
    for r in reviews {
        dsu.union(r.p, np + r.j);
        has_review[r.p] = true;
        has_review[np + r.j] = true;
    }
    main_component(np, nj, &mut dsu, &has_review, reviews.iter().map(|r| r.p))
}

/// The components of a graph joined in `dsu` (`np` projects, then `nj` judges) and which
/// one is ranked: the most projects, then the most links, then the smallest project index.
/// `linked[node]` says whether a node has a link; `link_projects` gives one project of
/// each link (reviews, and in engine v6 comparisons), to count the links per component.
pub(crate) fn main_component(
    np: usize,
    nj: usize,
    dsu: &mut Dsu,
    linked: &[bool],
    link_projects: impl Iterator<Item = usize>,
) -> Components {
    // Per root: (projects, links, smallest project index).
    let mut stats: Vec<(usize, usize, usize)> = vec![(0, 0, usize::MAX); np + nj];
    for p in link_projects {
        let root = dsu.find(p);
        stats[root].1 += 1;
    }
    for p in (0..np).filter(|&p| linked[p]) {
        let root = dsu.find(p);
        stats[root].0 += 1;
        stats[root].2 = stats[root].2.min(p);
    }
    let mut count = 0u32;
    let mut best: Option<usize> = None;
    for node in 0..np + nj {
        if !linked[node] || dsu.find(node) != node {
            continue;
        }
        count += 1;
        let better = match best {
            None => true,
            Some(b) => {
                let (sa, sb) = (stats[node], stats[b]);
                (sa.0, sa.1, std::cmp::Reverse(sa.2)) > (sb.0, sb.1, std::cmp::Reverse(sb.2))
            }
        };
        if better {
            best = Some(node);
        }
    }
    let mut project_in_main = vec![false; np];
    let mut judge_in_main = vec![false; nj];
    if let Some(root) = best {
        for p in 0..np {
            project_in_main[p] = linked[p] && dsu.find(p) == root;
        }
        for j in 0..nj {
            judge_in_main[j] = linked[np + j] && dsu.find(np + j) == root;
        }
    }
    Components {
        count,
        project_in_main,
        judge_in_main,
    }
}
