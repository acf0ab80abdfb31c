use super::*;

/// After a restart: `audit verify` passes, and the database holds every acknowledged
/// review save, run, publication and job exactly as answered, nothing that was never sent
/// or was refused, and one audit entry for each; every run is whole (signed, its hashes
/// those of its stored inputs and result, every project and judge in it) and the latest
/// publication's bundle verifies offline.
#[allow(clippy::too_many_arguments)]
pub(super) async fn check_mixed(
    app: &App,
    slug: &str,
    organizer: &str,
    key: &PublicKey,
    assignments: &[String],
    log: &Arc<Mutex<Mixed>>,
    compared: &mut BTreeSet<String>,
    when: &str,
) {
    use entity::{
        assignment, audit_event, calibration_job, calibration_run, event, result_publication,
        review, review_revision,
    };
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
    use verdict::domain::results::{PublicationDocument, parse_result, run_signature_ok};

    app.audit_head().await;
    let conn = Database::connect(app.db.url()).await.expect("connect");
    let e = event::Entity::find()
        .filter(event::Column::Slug.eq(slug))
        .one(&conn)
        .await
        .expect("read")
        .expect("the event");
    let assigned: BTreeMap<i64, String> = assignment::Entity::find()
        .filter(assignment::Column::PublicId.is_in(assignments.iter().cloned()))
        .all(&conn)
        .await
        .expect("read")
        .into_iter()
        .map(|a| (a.id, a.public_id))
        .collect();
    let reviews = review::Entity::find()
        .filter(review::Column::AssignmentId.is_in(assigned.keys().copied()))
        .all(&conn)
        .await
        .expect("read");
    let revisions = review_revision::Entity::find()
        .filter(review_revision::Column::ReviewId.is_in(reviews.iter().map(|r| r.id)))
        .order_by_asc(review_revision::Column::ReviewId)
        .order_by_asc(review_revision::Column::Version)
        .all(&conn)
        .await
        .expect("read");
    let runs = calibration_run::Entity::find()
        .filter(calibration_run::Column::EventId.eq(e.id))
        .all(&conn)
        .await
        .expect("read");
    let publications = result_publication::Entity::find()
        .filter(result_publication::Column::EventId.eq(e.id))
        .order_by_asc(result_publication::Column::Version)
        .all(&conn)
        .await
        .expect("read");
    let jobs = calibration_job::Entity::find()
        .filter(calibration_job::Column::EventId.eq(e.id))
        .all(&conn)
        .await
        .expect("read");
    let entries = audit_event::Entity::find()
        .filter(audit_event::Column::Event.eq(e.external_id.as_str()))
        .all(&conn)
        .await
        .expect("read");
    let _ = conn.close().await;
    let payload = |a: &audit_event::Model| -> Value {
        serde_json::from_str(&a.payload).expect("an audit payload")
    };
    // The entries of `action` by object id.
    fn by_object<'a>(
        entries: &'a [audit_event::Model],
        action: &str,
    ) -> BTreeMap<String, Vec<&'a audit_event::Model>> {
        let mut by = BTreeMap::<String, Vec<_>>::new();
        for a in entries.iter().filter(|a| a.action == action) {
            by.entry(a.object_id.clone()).or_default().push(a);
        }
        by
    }
    let entries_of = |action: &str| by_object(&entries, action);

    let runs_acked = {
        let l = log.lock().expect("log");
        assert!(l.wrong.is_empty(), "{when}: {:#?}", l.wrong);

        // Reviews: every revision is a save that was sent, with exactly its scores; every
        // acknowledged save is there at the version it was told; one audit entry each.
        let review_of: BTreeMap<i64, &review::Model> = reviews.iter().map(|r| (r.id, r)).collect();
        let mut labels = BTreeSet::new();
        let mut versions = BTreeMap::<String, Vec<i32>>::new();
        let mut kept = BTreeMap::<(String, i64), bool>::new();
        for rev in &revisions {
            let r = review_of[&rev.review_id];
            let sent = l.saves_sent.get(&rev.comment).unwrap_or_else(|| {
                panic!(
                    "{when}: review {} v{} holds a save never sent: {rev:?}",
                    r.public_id, rev.version
                )
            });
            assert_eq!(
                sent.assignment, assigned[&r.assignment_id],
                "{when}: save {} landed on another assignment",
                rev.comment
            );
            let scores: BTreeMap<String, i64> =
                serde_json::from_str(&rev.scores).expect("stored scores");
            assert_eq!(
                scores,
                sent.scores(),
                "{when}: save {} holds scores that were never sent",
                rev.comment
            );
            assert!(
                rev.submitted || !sent.submit,
                "{when}: submission {} is stored as a draft",
                rev.comment
            );
            assert!(
                labels.insert(rev.comment.clone()),
                "{when}: save {} is stored twice",
                rev.comment
            );
            versions
                .entry(r.public_id.clone())
                .or_default()
                .push(rev.version);
            kept.insert((r.public_id.clone(), rev.version.into()), rev.submitted);
        }
        for r in &reviews {
            let v = &versions[&r.public_id];
            assert_eq!(
                *v,
                (1..=r.version).collect::<Vec<_>>(),
                "{when}: review {} has a gap in its revisions",
                r.public_id
            );
            let last = revisions
                .iter()
                .find(|rev| rev.review_id == r.id && rev.version == r.version)
                .expect("the last revision");
            assert_eq!(
                (&r.scores, &r.comment, r.submitted),
                (&last.scores, &last.comment, last.submitted),
                "{when}: review {} is not its last revision",
                r.public_id
            );
        }
        for (label, (id, version)) in &l.saves_acked {
            let rev = revisions.iter().find(|rev| rev.comment == *label);
            let stored = rev.map(|rev| {
                (
                    review_of[&rev.review_id].public_id.clone(),
                    i64::from(rev.version),
                )
            });
            assert_eq!(
                stored.as_ref(),
                Some(&(id.clone(), *version)),
                "{when}: acknowledged save {label} is lost or moved"
            );
        }
        let mut audited = BTreeMap::<(String, i64), Vec<&str>>::new();
        for a in entries
            .iter()
            .filter(|a| a.action == "review.saved" || a.action == "review.submitted")
            .filter(|a| versions.contains_key(&a.object_id))
        {
            let v = payload(a)["version"].as_i64().expect("a version");
            audited
                .entry((a.object_id.clone(), v))
                .or_default()
                .push(&a.action);
        }
        assert_eq!(
            audited.keys().collect::<Vec<_>>(),
            kept.keys().collect::<Vec<_>>(),
            "{when}: one audit entry per stored review save, none for a save not stored"
        );
        for (k, actions) in &audited {
            let want = if kept[k] {
                "review.submitted"
            } else {
                "review.saved"
            };
            assert_eq!(*actions, vec![want], "{when}: audit entries of save {k:?}");
        }

        // Runs: sent, each request stored at most once, whole and signed; one
        // calibration.ran entry each, the one the run points at.
        let ran = entries_of("calibration.ran");
        let mut seeds = BTreeSet::new();
        for run in &runs {
            assert!(
                l.runs_sent.contains(&run.seed) || l.jobs_sent.contains(&run.seed),
                "{when}: run {} (seed {}) was never asked for",
                run.public_id,
                run.seed
            );
            assert!(
                seeds.insert(run.seed),
                "{when}: seed {} stored twice (one keyed request)",
                run.seed
            );
            assert!(
                run_signature_ok(key, &e.external_id, run),
                "{when}: run {} is not signed by the deployment's key",
                run.public_id
            );
            assert_eq!(
                sha256_hex(run.result.as_bytes()),
                run.result_hash,
                "{when}: run {}'s result is not the one hashed",
                run.public_id
            );
            assert_eq!(
                sha256_hex(run.inputs.as_bytes()),
                run.inputs_hash,
                "{when}: run {}'s inputs are not the ones hashed",
                run.public_id
            );
            let result = parse_result(run).expect("a stored result");
            assert_eq!(
                (result.projects.len(), result.judges.len()),
                (PROJECTS, JUDGES),
                "{when}: run {} is missing projects or judges",
                run.public_id
            );
            let entry = ran
                .get(&run.public_id)
                .map(Vec::as_slice)
                .unwrap_or_default();
            assert!(
                entry.len() == 1
                    && entry[0].seq == run.audit_seq
                    && payload(entry[0])["result_hash"] == run.result_hash.as_str(),
                "{when}: run {} has {} calibration.ran entries",
                run.public_id,
                entry.len()
            );
        }
        assert_eq!(
            ran.values().map(Vec::len).sum::<usize>(),
            runs.len(),
            "{when}: a calibration.ran entry without its run"
        );
        for (seed, acked) in &l.runs_acked {
            let run = runs
                .iter()
                .find(|r| acked["id"] == r.public_id.as_str())
                .unwrap_or_else(|| {
                    panic!("{when}: acknowledged run {acked} (seed {seed}) is lost")
                });
            assert_eq!(
                (
                    run.seed,
                    run.inputs_hash.as_str(),
                    run.result_hash.as_str(),
                    run.signature.as_str()
                ),
                (
                    *seed,
                    acked["inputsHash"].as_str().unwrap_or_default(),
                    acked["resultHash"].as_str().unwrap_or_default(),
                    acked["signature"].as_str().unwrap_or_default()
                ),
                "{when}: run {} is not the one acknowledged",
                run.public_id
            );
        }

        // Publications: numbered 1, 2, ... without a gap, each of a run sent for
        // publication, signed, one results.published entry each; every acknowledged one
        // is there with its run.
        let published = entries_of("results.published");
        let run_of: BTreeMap<i64, &calibration_run::Model> =
            runs.iter().map(|r| (r.id, r)).collect();
        let mut published_runs = BTreeSet::new();
        for (i, p) in publications.iter().enumerate() {
            assert_eq!(
                p.version as usize,
                i + 1,
                "{when}: publication versions have a gap"
            );
            let run = run_of[&p.run_id];
            assert!(
                published_runs.insert(run.id),
                "{when}: run {} is published twice (one keyed request)",
                run.public_id
            );
            assert!(
                l.pubs_sent.contains(&run.public_id) && !p.is_final,
                "{when}: publication {} of run {} was never asked for",
                p.version,
                run.public_id
            );
            // The signed document as the publication stands: v2 (with its Merkle root) or
            // v1 (published before roots).
            let document = PublicationDocument::of(&e.external_id, p, run);
            assert!(
                document.signature_ok(key, &p.signature),
                "{when}: publication {} is not signed",
                p.version
            );
            let entry = published
                .get(&p.public_id)
                .map(Vec::as_slice)
                .unwrap_or_default();
            assert!(
                entry.len() == 1
                    && entry[0].seq == p.audit_seq
                    && payload(entry[0])["run"] == run.public_id.as_str(),
                "{when}: publication {} has {} results.published entries",
                p.version,
                entry.len()
            );
        }
        assert_eq!(
            published.values().map(Vec::len).sum::<usize>(),
            publications.len(),
            "{when}: a results.published entry without its publication"
        );
        for (version, run) in &l.pubs_acked {
            let stored = publications
                .get(*version as usize - 1)
                .map(|p| run_of[&p.run_id].public_id.as_str());
            assert_eq!(
                stored,
                Some(run.as_str()),
                "{when}: acknowledged publication {version} is lost or of another run"
            );
        }

        // Jobs: each was sent; one calibration.started entry each; a done job's run is a
        // run of its seed, a failed one has its reason and at most one calibration.failed.
        let started = entries_of("calibration.started");
        let failed = entries_of("calibration.failed");
        let mut job_seeds = BTreeSet::new();
        for job in &jobs {
            assert!(
                l.jobs_sent.contains(&job.seed),
                "{when}: job {} was never asked for",
                job.public_id
            );
            assert!(
                job_seeds.insert(job.seed),
                "{when}: job seed {} started twice (one keyed request)",
                job.seed
            );
            assert_eq!(
                started.get(&job.public_id).map(Vec::len),
                Some(1),
                "{when}: calibration.started entries of job {}",
                job.public_id
            );
            let failures = failed.get(&job.public_id).map(Vec::len).unwrap_or(0);
            match (job.finished_at, job.run_id, &job.error) {
                (Some(_), Some(run), None) => {
                    assert_eq!(
                        run_of.get(&run).map(|r| r.seed),
                        Some(job.seed),
                        "{when}: job {}'s run",
                        job.public_id
                    );
                    assert_eq!(
                        failures, 0,
                        "{when}: done job {} has a failure entry",
                        job.public_id
                    );
                }
                (Some(_), None, Some(_)) => {
                    assert!(failures <= 1, "{when}: job {} failed twice", job.public_id)
                }
                (None, None, None) => assert_eq!(failures, 0, "{when}: job {}", job.public_id),
                _ => panic!("{when}: job {} is half closed: {job:?}", job.public_id),
            }
        }
        assert_eq!(
            started.values().map(Vec::len).sum::<usize>(),
            jobs.len(),
            "{when}: a calibration.started entry without its job"
        );
        for (job, seed) in &l.jobs_acked {
            assert!(
                jobs.iter().any(|j| j.public_id == *job && j.seed == *seed),
                "{when}: acknowledged job {job} is lost"
            );
        }
        for (job, read) in &l.jobs_ended {
            let row = jobs.iter().find(|j| j.public_id == *job).expect("the job");
            if read["state"] == "DONE" {
                let run = row.run_id.and_then(|r| run_of.get(&r));
                assert_eq!(
                    run.map(|r| r.public_id.as_str()),
                    read["run"]["id"].as_str(),
                    "{when}: job {job} was seen done with another run"
                );
            }
        }
        l.runs_acked.clone()
    };

    // What the server shows: each acknowledged run as it was answered, whole (compared
    // once, the first restart after it was acknowledged: a run never changes); every job
    // ended, none running with no process left to compute it; the publications, the
    // latest public.
    for (seed, acked) in &runs_acked {
        let id = acked["id"].as_str().expect("a run id");
        if !compared.insert(id.to_owned()) {
            continue;
        }
        let d = app
            .ok(Some(organizer), STORED_RUN, json!({ "e": slug, "r": id }))
            .await;
        let shown = &d["event"]["calibrationRun"];
        assert_eq!(
            shown, acked,
            "{when}: run {id} (seed {seed}) is not as acknowledged"
        );
        assert_eq!(
            (
                shown["projects"].as_array().map(Vec::len),
                shown["judges"].as_array().map(Vec::len)
            ),
            (Some(PROJECTS), Some(JUDGES)),
            "{when}: run {id}"
        );
    }
    for job in jobs.iter().filter(|j| j.finished_at.is_none()) {
        let read = ended_job(
            app,
            slug,
            organizer,
            &job.public_id,
            Duration::from_secs(15),
        )
        .await;
        assert!(
            read["state"] == "FAILED" && read["error"].as_str().unwrap_or("").contains("stopped"),
            "{when}: job {} left running by the crash reads {read}",
            job.public_id
        );
    }
    let shown = app
        .ok(Some(organizer), PUBLISHED, json!({ "e": slug }))
        .await;
    let listed: Vec<(i64, String)> = shown["event"]["publications"]
        .as_array()
        .expect("publications")
        .iter()
        .map(|p| {
            (
                p["version"].as_i64().expect("a version"),
                str_at(p, "/runId"),
            )
        })
        .collect();
    let stored: Vec<(i64, String)> = publications
        .iter()
        .map(|p| {
            let run = runs.iter().find(|r| r.id == p.run_id).expect("its run");
            (i64::from(p.version), run.public_id.clone())
        })
        .collect();
    assert_eq!(listed, stored, "{when}: the publications shown");
    let Some(latest) = publications.last() else {
        return;
    };
    assert_eq!(
        shown["event"]["results"]["version"], latest.version,
        "{when}: the public results are the latest publication"
    );
    let dir = app.db.dir().join(format!("bundle-{}", unique()));
    let dir = dir.to_str().expect("utf-8 path");
    let out = app.cli(&["results", "export", "--event", slug, dir]).await;
    assert!(out.success(), "{when}: export: {out:?}");
    let out = app.cli(&["results", "verify", dir]).await;
    assert!(
        out.success(),
        "{when}: the latest publication's bundle: {out:?}"
    );
}
