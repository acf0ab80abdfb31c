//! Statement counts of list queries: a page costs the same whatever its size.

use super::*;

/// Services whose loaders wait 200 ms for a batch: at 25 ms, batches split at load 14 on 2
/// cores (clippy beside the e2e tests; 26 statements for a gallery page of 50, 20 for 100
/// assignments), which is the scheduler, not the loaders' structure, that these count.
fn counted(db: &Db) -> Services {
    services_batching(db, 200)
}

#[tokio::test]
async fn gallery_page_of_50_costs_a_constant_number_of_statements() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        let mut used = vec![];
        for n in [5, 50] {
            let q = format!(
                r#"{{ event(slug: "spring-hack-2026") {{ projects(first: {n}) {{ totalCount edges {{ node {{
                title status track {{ name }} team {{ name members {{ displayName }} projects {{ title }} }}
                event {{ name }} }} }} }} }} }}"#
            );
            let before = t.db.statement_count();
            let resp = execute_with(&counted(&t.db), Some(&admin), &q).await;
            used.push(t.db.statement_count() - before);
            assert!(resp.errors.is_empty(), "{}: {:?}", t.name, resp.errors);
            let data = resp.data.into_json().unwrap();
            let edges = data["event"]["projects"]["edges"].as_array().unwrap().len();
            assert_eq!(edges, n, "{}", t.name);
        }
        println!(
            "{}: gallery with tracks, teams, members, team projects, events: {} statements for 5 projects, {} for 50",
            t.name, used[0], used[1]
        );
        // One statement per hop and batch: event, count, page, tracks, teams, team members
        // (links + users), team projects, events, the caller's access. Ten times the page
        // costs (almost) nothing more; one query per project would be hundreds.
        // A batch may split in two when a busy machine outlasts the batching window, so
        // the bounds allow one split per hop; one query per item would be hundreds.
        assert!(
            used[1] <= 22,
            "{}: {} statements for one gallery page of 50",
            t.name,
            used[1]
        );
        assert!(
            used[1] <= 2 * used[0],
            "{}: statements grow with the page: {used:?}",
            t.name
        );
    }
}

#[tokio::test]
async fn judging_lists_cost_a_constant_number_of_statements() {
    let t = sqlite().await;
    import_fixture(&t.db).await;
    let admin = site_admin(&t.db).await;
    let mut used = vec![];
    for n in [10, 100] {
        let q = format!(
            r#"{{ event(slug: "spring-hack-2026") {{ assignments(first: {n}) {{ edges {{ node {{
            status project {{ title team {{ name }} }} judge {{ externalId user {{ displayName }} }}
            review {{ version scores {{ criterion value }} }} }} }} }} }} }}"#
        );
        let before = t.db.statement_count();
        let resp = execute_with(&counted(&t.db), Some(&admin), &q).await;
        used.push(t.db.statement_count() - before);
        assert!(resp.errors.is_empty(), "{:?}", resp.errors);
        let data = resp.data.into_json().unwrap();
        assert_eq!(
            data["event"]["assignments"]["edges"]
                .as_array()
                .unwrap()
                .len(),
            n
        );
    }
    println!(
        "assignments with projects, teams, judges, users, reviews: {} statements for 10, {} for 100",
        used[0], used[1]
    );
    // As above: room for one split batch per hop, nowhere near one query per assignment.
    assert!(used[1] <= 18, "{} statements for 100 assignments", used[1]);
    assert!(
        used[1] <= 2 * used[0],
        "statements grow with the page: {used:?}"
    );
}
