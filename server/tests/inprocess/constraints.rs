//! The database's own constraints and triggers: same-event tracks, the submission invariant, comments kept as posted.

use super::*;

#[tokio::test]
async fn the_database_enforces_same_event_tracks_and_the_submission_invariant() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        // A second event with its own track.
        let w = Write::begin(&t.db, Some(admin.clone())).await.unwrap();
        let f = verdict::domain::events::EventFields {
            slug: Some("other".into()),
            name: Some("Other".into()),
            submissions_open: Some(chrono::Utc::now()),
            submissions_close: Some(chrono::Utc::now() + chrono::Duration::days(1)),
            ..Default::default()
        };
        let other = verdict::domain::events::create_event(&w, f).await.unwrap();
        let org = w.organizer(&other).await.unwrap();
        let foreign = verdict::domain::events::create_track(&w, org, "Foreign", None)
            .await
            .unwrap();
        w.commit().await.unwrap();
        let p = verdict::domain::find_project(&t.db.conn, "prj_001", None)
            .await
            .unwrap()
            .unwrap();
        let c = &t.db.conn;
        let cross = format!(
            "UPDATE projects SET track_id = {} WHERE id = {}",
            foreign.id, p.id
        );
        assert!(
            c.execute_unprepared(&cross).await.is_err(),
            "{}: a project took another event's track",
            t.name
        );
        let unsubmitted = format!(
            "UPDATE projects SET submitted_at = NULL WHERE id = {}",
            p.id
        );
        assert!(
            c.execute_unprepared(&unsubmitted).await.is_err(),
            "{}: submitted without submitted_at",
            t.name
        );
        let bad_url = format!(
            "UPDATE projects SET repo_url = 'javascript:alert(1)' WHERE id = {}",
            p.id
        );
        assert!(
            c.execute_unprepared(&bad_url).await.is_err(),
            "{}: non-http URL stored",
            t.name
        );
        let upper = "UPDATE users SET email = 'Root@Example.org' WHERE email = 'root@example.org'";
        assert!(
            c.execute_unprepared(upper).await.is_err(),
            "{}: mixed-case email stored",
            t.name
        );
        let txn = t.db.conn.begin().await.unwrap();
        let m = entity::team_member::Entity::find()
            .one(&txn)
            .await
            .unwrap()
            .unwrap();
        let dup = format!(
            "INSERT INTO team_members (event_id, team_id, user_id, created_at) SELECT event_id, team_id, user_id, created_at FROM team_members WHERE id = {}",
            m.id
        );
        assert!(
            txn.execute_unprepared(&dup).await.is_err(),
            "{}: a person joined two teams",
            t.name
        );
    }
}

#[tokio::test]
async fn the_database_keeps_comments_as_posted_and_hides_them_only_softly() {
    use entity::{comment, project};
    use sea_orm::{ColumnTrait, QueryFilter};
    use verdict::domain::comments;
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        let p = project::Entity::find()
            .filter(project::Column::Status.eq(project::ProjectStatus::Submitted))
            .one(&t.db.conn)
            .await
            .unwrap()
            .unwrap();
        let w = Write::begin(&t.db, Some(admin.clone())).await.unwrap();
        let f = verdict::domain::events::EventFields {
            slug: Some("elsewhere".into()),
            name: Some("Elsewhere".into()),
            submissions_open: Some(chrono::Utc::now()),
            submissions_close: Some(chrono::Utc::now() + chrono::Duration::days(1)),
            ..Default::default()
        };
        let other = verdict::domain::events::create_event(&w, f).await.unwrap();
        let posted = comments::post_comment(&w, &p.public_id, "  As posted.  ")
            .await
            .unwrap();
        w.commit().await.unwrap();
        assert_eq!(posted.body, "As posted.", "{}", t.name);
        let c = &t.db.conn;
        let refused = [
            (
                format!(
                    "UPDATE comments SET body = 'Rewritten.' WHERE id = {}",
                    posted.id
                ),
                "what was posted changed",
            ),
            (
                format!(
                    "UPDATE comments SET author_id = \
                     (SELECT MIN(id) FROM users WHERE id <> comments.author_id) WHERE id = {}",
                    posted.id
                ),
                "the author was reassigned",
            ),
            (
                format!("DELETE FROM comments WHERE id = {}", posted.id),
                "a comment was deleted",
            ),
            (
                format!(
                    "UPDATE comments SET hidden_at = created_at WHERE id = {}",
                    posted.id
                ),
                "hidden without a reason",
            ),
            (
                format!(
                    "INSERT INTO comments (public_id, event_id, project_id, author_id, body, created_at) \
                     SELECT 'cmt_long', event_id, project_id, author_id, '{}', created_at FROM comments WHERE id = {}",
                    "x".repeat(2_001),
                    posted.id
                ),
                "a body of 2,001 characters",
            ),
            (
                format!(
                    "INSERT INTO comments (public_id, event_id, project_id, author_id, body, created_at) \
                     SELECT 'cmt_blank', event_id, project_id, author_id, '   ', created_at FROM comments WHERE id = {}",
                    posted.id
                ),
                "a blank body",
            ),
            (
                format!(
                    "INSERT INTO comments (public_id, event_id, project_id, author_id, body, created_at) \
                     SELECT 'cmt_cross', {}, project_id, author_id, body, created_at FROM comments WHERE id = {}",
                    other.id, posted.id
                ),
                "a comment in another event than its project's",
            ),
        ];
        for (sql, what) in refused {
            assert!(
                c.execute_unprepared(&sql).await.is_err(),
                "{}: {what}",
                t.name
            );
        }
        // Hiding keeps the row and what it said.
        let w = Write::begin(&t.db, Some(admin.clone())).await.unwrap();
        comments::hide_comment(&w, &posted.public_id, "Off-topic")
            .await
            .unwrap();
        w.commit().await.unwrap();
        let row = comment::Entity::find_by_id(posted.id)
            .one(c)
            .await
            .unwrap()
            .expect("the hidden comment stays");
        assert_eq!(row.body, "As posted.", "{}", t.name);
        assert_eq!(
            row.hidden_reason.as_deref(),
            Some("Off-topic"),
            "{}",
            t.name
        );
    }
}
