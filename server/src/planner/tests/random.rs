//! Random small events: every invariant against the independent references.

use super::*;

fn random_instance(
    rng: &mut SplitMix64,
) -> (Vec<PlanProject>, Vec<PlanJudge>, usize, Option<usize>) {
    let tracks = 1 + rng.below(4);
    let teams = 1 + rng.below(8);
    let nj = rng.below(10);
    let np = rng.below(20);
    let mut judges = Vec::new();
    for i in 0..nj {
        let mut j = judge(&format!("j{i}"), &[], rng.below(4));
        if rng.below(2) == 0 {
            for t in 0..tracks {
                if rng.below(3) == 0 {
                    j.tracks.push(format!("t{t}"));
                }
            }
        }
        if rng.below(6) == 0 {
            j.team_ids.push(format!("team{}", rng.below(teams)));
        }
        if rng.below(3) == 0 {
            j.recused_teams.push(format!("team{}", rng.below(teams)));
        }
        judges.push(j);
    }
    let mut projects = Vec::new();
    for i in 0..np {
        let mut p = proj(
            &format!("p{i}"),
            &format!("t{}", rng.below(tracks)),
            &format!("team{}", rng.below(teams)),
            &[],
        );
        for _ in 0..rng.below(3) {
            let e = rng.below(nj + 2);
            let id = if e < nj {
                format!("j{e}")
            } else {
                format!("gone{e}")
            };
            if !p.existing.contains(&id) {
                p.existing.push(id);
            }
        }
        projects.push(p);
    }
    let k = rng.below(6);
    let max_load = if rng.below(2) == 0 {
        None
    } else {
        Some(rng.below(9))
    };
    (projects, judges, k, max_load)
}

/// Random small events: every invariant, maximum coverage against an independent
/// max-flow, optimal balance (no improving move), idempotence, order independence.
#[test]
fn random_events_satisfy_all_invariants() {
    let mut rng = SplitMix64::new(2024);
    let mut greedy_short = 0;
    for case in 0..1500 {
        let (projects, judges, k, max_load) = random_instance(&mut rng);
        let seed = rng.next_u64();
        let out = plan(&projects, &judges, k, max_load, seed);
        check(&projects, &judges, k, max_load, &out, true);
        replan_adds_nothing(&projects, &judges, k, max_load, seed, &out);
        let mut rev_p = projects.clone();
        rev_p.reverse();
        let mut rev_j = judges.clone();
        rev_j.reverse();
        assert_eq!(out, plan(&rev_p, &rev_j, k, max_load, seed), "case {case}");

        // Phases 1-4 alone: no judge could hand a review to one two below it.
        let mut pl = Planner::new(&projects, &judges, k, max_load, seed);
        pl.fill();
        if pl.augmented > 0 {
            greedy_short += 1;
        }
        pl.balance();
        let mut before: Vec<usize> = pl.load.clone();
        let counts: Vec<usize> = pl.new_on.iter().map(Vec::len).collect();
        pl.spread();
        let mut after: Vec<usize> = pl.load.clone();
        before.sort_unstable();
        after.sort_unstable();
        assert_eq!(before, after, "case {case}: spread keeps the load multiset");
        assert_eq!(counts, pl.new_on.iter().map(Vec::len).collect::<Vec<_>>());
        for a in 0..pl.j_id.len() {
            for &q in &pl.judge_new[a] {
                for &b in &pl.elig[q] {
                    if !pl.is_new(b, q) && pl.room(b) {
                        assert!(pl.load[a] <= pl.load[b] + 1, "case {case}: unbalanced");
                    }
                }
            }
        }
        // Bridges agree with brute force: removing the edge disconnects its ends.
        let comps = pl.analyze();
        for p in 0..pl.p_id.len() {
            for x in pl.new_on[p].clone() {
                pl.remove(x, p);
                let after = pl.analyze();
                let apart = after.judge[x] == NONE || after.judge[x] != after.project[p];
                pl.add(x, p);
                assert_eq!(comps.bridges.contains(&(x, p)), apart, "case {case}");
            }
        }
        // The connect phase never loses coverage or adds components.
        let counts: Vec<usize> = pl.new_on.iter().map(Vec::len).collect();
        pl.connect();
        assert!(pl.components().count <= comps.count);
        assert!(
            counts
                .iter()
                .zip(&pl.new_on)
                .all(|(&c, now)| now.len() >= c)
        );
    }
    println!("cases where a direct pick was impossible and a path filled: {greedy_short}");
    assert!(greedy_short > 0, "augmenting paths are exercised");
}
