//! CSV exports for organizers. Every cell that a spreadsheet would run as a formula is
//! neutralized, and every export appends an audit entry.

use std::collections::HashMap;

use entity::{
    assignment, audit_event, membership, project, review, team, team_member, track, user,
};
use sea_orm::{ActiveEnum, ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::json;

use super::{Organizer, Write, json_ids, json_list};
use crate::audit::Entry;
use crate::error::{AppError, AppResult};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Registrations,
    Teams,
    Projects,
    Assignments,
    Scores,
    Results,
    Judges,
    Audit,
    InvitationLinks,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Registrations => "registrations",
            Kind::Teams => "teams",
            Kind::Projects => "projects",
            Kind::Assignments => "assignments",
            Kind::Scores => "scores",
            Kind::Results => "results",
            Kind::Judges => "judges",
            Kind::Audit => "audit",
            Kind::InvitationLinks => "invitation_links",
        }
    }
}

/// A cell a spreadsheet shows as text, never as a formula.
///
/// Numbers stay numbers (`-0.052` is a score, not a formula). Any other cell whose first
/// meaningful character could start a formula gets a leading apostrophe. Spreadsheets
/// skip leading white space and line breaks, and some treat `|` as the start of a DDE
/// command, so those are looked past; the formula characters include their full-width
/// look-alikes (`＝`, `＋`, `－`, `＠`), which some spreadsheets fold to ASCII.
pub fn neutralize(cell: &str) -> String {
    if is_plain_number(cell) {
        return cell.to_owned();
    }
    let formula = cell
        .chars()
        .find(|c| !c.is_whitespace() && *c != '|')
        .is_some_and(|c| {
            matches!(
                c,
                '=' | '+'
                    | '-'
                    | '@'
                    | '\u{FF1D}'
                    | '\u{FF0B}'
                    | '\u{FF0D}'
                    | '\u{FF20}'
                    | '\u{2212}'
            )
        });
    if formula || cell.starts_with(['\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    }
}

/// A decimal number as Verdict writes them: optional minus, digits, optional fraction.
fn is_plain_number(cell: &str) -> bool {
    let digits = cell.strip_prefix('-').unwrap_or(cell);
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

fn hs(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// A CSV file of `rows` under `header`, every cell [`neutralize`]d.
pub(super) fn csv_text(header: &[String], rows: Vec<Vec<String>>) -> AppResult<String> {
    let mut w = csv::Writer::from_writer(vec![]);
    let fail = |e: csv::Error| AppError::Internal(format!("csv: {e}"));
    w.write_record(header).map_err(fail)?;
    for r in rows {
        w.write_record(r.iter().map(|c| neutralize(c)))
            .map_err(fail)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| AppError::Internal(format!("csv: {e}")))?;
    String::from_utf8(bytes).map_err(|e| AppError::Internal(e.to_string()))
}

fn f(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.6}")).unwrap_or_default()
}

fn u<T: ToString>(x: Option<T>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

/// Builds the CSV of `kind` for event `e` and appends one `export.created` audit entry.
pub async fn export(w: &Write, org: Organizer<'_>, kind: Kind) -> AppResult<String> {
    if kind == Kind::InvitationLinks {
        // Every pending credential at once: audited as `invitations.links_exported`.
        let links = super::invitation_links::export_links(w, org, org.event()).await?;
        return csv_text(
            &hs(&["email", "role", "link", "expires_at"]),
            links
                .into_iter()
                .map(|l| {
                    vec![
                        l.email,
                        l.role.to_value(),
                        l.link,
                        l.expires_at.to_rfc3339(),
                    ]
                })
                .collect(),
        );
    }
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    // Only the event's own people: everyone an export names holds a membership in it.
    let event_people = sea_orm::sea_query::Query::select()
        .column(membership::Column::UserId)
        .from(membership::Entity)
        .and_where(membership::Column::EventId.eq(e.id))
        .to_owned();
    let users: HashMap<i64, user::Model> = user::Entity::find()
        .filter(user::Column::Id.in_subquery(event_people))
        .all(txn)
        .await?
        .into_iter()
        .map(|u| (u.id, u))
        .collect();
    let teams: HashMap<i64, team::Model> = team::Entity::find()
        .filter(team::Column::EventId.eq(e.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|t| (t.id, t))
        .collect();
    let tracks: HashMap<i64, track::Model> = track::Entity::find()
        .filter(track::Column::EventId.eq(e.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|t| (t.id, t))
        .collect();
    let projects: HashMap<i64, project::Model> = project::Entity::find()
        .filter(project::Column::EventId.eq(e.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|p| (p.id, p))
        .collect();
    let members: HashMap<i64, membership::Model> = membership::Entity::find()
        .filter(membership::Column::EventId.eq(e.id))
        .order_by_asc(membership::Column::Id)
        .all(txn)
        .await?
        .into_iter()
        .map(|m| (m.id, m))
        .collect();
    let name = |uid: i64| {
        users
            .get(&uid)
            .map(|u| u.display_name.clone())
            .unwrap_or_default()
    };
    let email = |uid: i64| users.get(&uid).map(|u| u.email.clone()).unwrap_or_default();
    let judge = |mid: i64| {
        members
            .get(&mid)
            .map(super::judges::judge_key)
            .unwrap_or_default()
    };
    let proj = |pid: i64| {
        projects
            .get(&pid)
            .map(|p| p.external_id.clone())
            .unwrap_or_default()
    };
    let title = |pid: i64| {
        projects
            .get(&pid)
            .map(|p| p.title.clone())
            .unwrap_or_default()
    };
    // A judge by the key calibration names them with (`judge_key`): their user.
    let judge_by_key: HashMap<String, i64> = members
        .values()
        .filter(|m| m.role == super::Role::Judge)
        .map(|m| (super::judges::judge_key(m), m.user_id))
        .collect();
    let mut sorted_members: Vec<&membership::Model> = members.values().collect();
    sorted_members.sort_by_key(|m| m.id);
    let mut sorted_projects: Vec<&project::Model> = projects.values().collect();
    sorted_projects.sort_by(|a, b| a.external_id.cmp(&b.external_id));

    let (header, rows): (Vec<String>, Vec<Vec<String>>) = match kind {
        Kind::Registrations => (
            hs(&[
                "membership_id",
                "external_id",
                "role",
                "display_name",
                "email",
                "judge_tracks",
                "created_at",
                "judge_track_names",
            ]),
            sorted_members
                .iter()
                .map(|m| {
                    let ids = json_ids(&m.judge_tracks);
                    let tr: Vec<String> = ids
                        .iter()
                        .filter_map(|t| tracks.get(t).map(|t| t.external_id.clone()))
                        .collect();
                    let tr_names: Vec<String> = ids
                        .iter()
                        .filter_map(|t| tracks.get(t).map(|t| t.name.clone()))
                        .collect();
                    vec![
                        m.public_id.clone(),
                        u(m.external_id.clone()),
                        m.role.to_value(),
                        name(m.user_id),
                        email(m.user_id),
                        tr.join(" "),
                        m.created_at.to_rfc3339(),
                        tr_names.join("; "),
                    ]
                })
                .collect(),
        ),
        Kind::Teams => {
            let tm = team_member::Entity::find()
                .filter(team_member::Column::EventId.eq(e.id))
                .all(txn)
                .await?;
            let mut t: Vec<&team::Model> = teams.values().collect();
            t.sort_by(|a, b| a.external_id.cmp(&b.external_id));
            (
                hs(&["team_id", "external_id", "name", "members", "member_emails"]),
                t.iter()
                    .map(|t| {
                        let m: Vec<i64> = tm
                            .iter()
                            .filter(|x| x.team_id == t.id)
                            .map(|x| x.user_id)
                            .collect();
                        vec![
                            t.public_id.clone(),
                            t.external_id.clone(),
                            t.name.clone(),
                            m.iter().map(|x| name(*x)).collect::<Vec<_>>().join("; "),
                            m.iter().map(|x| email(*x)).collect::<Vec<_>>().join("; "),
                        ]
                    })
                    .collect(),
            )
        }
        Kind::Projects => (
            hs(&[
                "project_id",
                "external_id",
                "title",
                "team",
                "track",
                "status",
                "submitted_at",
                "repo_url",
                "demo_url",
                "tags",
                "tagline",
                "team_name",
                "track_name",
                "table",
            ]),
            sorted_projects
                .iter()
                .map(|p| {
                    vec![
                        p.public_id.clone(),
                        p.external_id.clone(),
                        p.title.clone(),
                        teams
                            .get(&p.team_id)
                            .map(|t| t.external_id.clone())
                            .unwrap_or_default(),
                        tracks
                            .get(&p.track_id)
                            .map(|t| t.external_id.clone())
                            .unwrap_or_default(),
                        p.status.to_value(),
                        u(p.submitted_at.map(|t| t.to_rfc3339())),
                        p.repo_url.clone(),
                        p.demo_url.clone(),
                        json_list(&p.tags).join(" "),
                        p.tagline.clone(),
                        teams
                            .get(&p.team_id)
                            .map(|t| t.name.clone())
                            .unwrap_or_default(),
                        tracks
                            .get(&p.track_id)
                            .map(|t| t.name.clone())
                            .unwrap_or_default(),
                        u(p.expo_table.clone()),
                    ]
                })
                .collect(),
        ),
        Kind::Assignments => {
            let a = assignment::Entity::find()
                .filter(assignment::Column::EventId.eq(e.id))
                .order_by_asc(assignment::Column::Id)
                .all(txn)
                .await?;
            (
                hs(&[
                    "assignment_id",
                    "judge",
                    "project",
                    "status",
                    "source",
                    "created_at",
                    "judge_name",
                    "judge_email",
                    "project_title",
                ]),
                a.iter()
                    .map(|a| {
                        let judge_user = members.get(&a.judge_id).map(|m| m.user_id);
                        vec![
                            a.public_id.clone(),
                            judge(a.judge_id),
                            proj(a.project_id),
                            // As `Assignment.status` reads it: `withdrawn` while the
                            // project's team has it withdrawn.
                            super::judging::Standing::of(
                                a,
                                projects.get(&a.project_id).is_some_and(|p| p.is_public()),
                            )
                            .as_str()
                            .to_owned(),
                            a.source.to_value(),
                            a.created_at.to_rfc3339(),
                            judge_user.map(name).unwrap_or_default(),
                            judge_user.map(email).unwrap_or_default(),
                            title(a.project_id),
                        ]
                    })
                    .collect(),
            )
        }
        Kind::Scores => {
            let rubric = super::judges::rubric(txn, e.id).await?;
            let reviews = review::Entity::find()
                .filter(review::Column::EventId.eq(e.id))
                .order_by_asc(review::Column::Id)
                .all(txn)
                .await?;
            let mut header = hs(&["review_id", "judge", "project", "submitted", "version"]);
            header.extend(rubric.iter().map(|c| c.key.clone()));
            // Names after the columns scripts already read by position.
            header.extend(hs(&[
                "weighted_total",
                "comment",
                "judge_name",
                "judge_email",
                "project_title",
            ]));
            let rows = reviews
                .iter()
                .map(|r| {
                    let s: HashMap<String, i64> =
                        serde_json::from_str(&r.scores).unwrap_or_default();
                    let mut row = vec![
                        r.public_id.clone(),
                        judge(r.judge_id),
                        proj(r.project_id),
                        r.submitted.to_string(),
                        r.version.to_string(),
                    ];
                    row.extend(rubric.iter().map(|c| u(s.get(&c.key))));
                    row.push(f(super::results::weighted_total(&rubric, &s)));
                    row.push(r.comment.clone());
                    let judge_user = members.get(&r.judge_id).map(|m| m.user_id);
                    row.push(judge_user.map(name).unwrap_or_default());
                    row.push(judge_user.map(email).unwrap_or_default());
                    row.push(
                        projects
                            .get(&r.project_id)
                            .map(|p| p.title.clone())
                            .unwrap_or_default(),
                    );
                    row
                })
                .collect();
            (header, rows)
        }
        Kind::Results | Kind::Judges => {
            let run = entity::calibration_run::Entity::find()
                .filter(entity::calibration_run::Column::EventId.eq(e.id))
                .order_by_desc(entity::calibration_run::Column::Id)
                .one(txn)
                .await?
                .ok_or_else(|| {
                    AppError::conflict("no calibration run yet: run the calibration first")
                })?;
            let r = super::results::parse_result(&run)?;
            if kind == Kind::Results {
                (
                    hs(&[
                        "rank",
                        "rank_low",
                        "rank_high",
                        "project",
                        "title",
                        "reviews",
                        "raw_mean",
                        "raw_rank",
                        "quality",
                        "std_error",
                        "excluded",
                        "run_id",
                        "inputs_hash",
                        "result_hash",
                        "team_name",
                        "track_name",
                    ]),
                    r.projects
                        .iter()
                        .map(|p| {
                            let row = sorted_projects.iter().find(|x| x.external_id == p.id);
                            let title = row.map(|x| x.title.clone());
                            let team_name = row
                                .and_then(|x| teams.get(&x.team_id))
                                .map(|t| t.name.clone());
                            let track_name = row
                                .and_then(|x| tracks.get(&x.track_id))
                                .map(|t| t.name.clone());
                            vec![
                                u(p.rank),
                                u(p.rank_low),
                                u(p.rank_high),
                                p.id.clone(),
                                title.unwrap_or_default(),
                                p.reviews.to_string(),
                                f(p.raw_mean),
                                u(p.raw_rank),
                                f(p.quality),
                                f(p.std_error),
                                u(p.excluded.clone()),
                                run.public_id.clone(),
                                run.inputs_hash.clone(),
                                run.result_hash.clone(),
                                team_name.unwrap_or_default(),
                                track_name.unwrap_or_default(),
                            ]
                        })
                        .collect(),
                )
            } else {
                (
                    hs(&[
                        "judge",
                        "reviews",
                        "offset",
                        "scale",
                        "noise",
                        "flag",
                        "run_id",
                        "judge_name",
                        "judge_email",
                    ]),
                    r.judges
                        .iter()
                        .map(|j| {
                            let judge_user = judge_by_key.get(&j.id).copied();
                            vec![
                                j.id.clone(),
                                j.reviews.to_string(),
                                f(j.offset),
                                f(j.scale),
                                f(j.noise),
                                j.flag.clone(),
                                run.public_id.clone(),
                                judge_user.map(name).unwrap_or_default(),
                                judge_user.map(email).unwrap_or_default(),
                            ]
                        })
                        .collect(),
                )
            }
        }
        Kind::InvitationLinks => {
            return Err(AppError::Internal(
                "the invitation links are written before the event's tables are read".into(),
            ));
        }
        Kind::Audit => {
            let rows = audit_event::Entity::find()
                .filter(audit_event::Column::Event.eq(e.external_id.clone()))
                .order_by_asc(audit_event::Column::Seq)
                .all(txn)
                .await?;
            // Who each actor is, by name (organizers and site admins act here too).
            let actors: std::collections::BTreeSet<&str> =
                rows.iter().map(|a| a.actor.as_str()).collect();
            let mut actor_names: HashMap<String, String> = HashMap::new();
            for chunk in actors.into_iter().collect::<Vec<_>>().chunks(1000) {
                for u in user::Entity::find()
                    .filter(user::Column::PublicId.is_in(chunk.iter().copied()))
                    .all(txn)
                    .await?
                {
                    actor_names.insert(u.public_id, u.display_name);
                }
            }
            (
                hs(&[
                    "seq",
                    "occurred_at",
                    "actor",
                    "action",
                    "object_type",
                    "object_id",
                    "payload",
                    "payload_hash",
                    "prev_hash",
                    "row_hash",
                    "actor_name",
                ]),
                rows.into_iter()
                    .map(|a| {
                        let actor_name = actor_names.get(&a.actor).cloned().unwrap_or_default();
                        vec![
                            a.seq.to_string(),
                            a.occurred_at,
                            a.actor,
                            a.action,
                            a.object_type,
                            a.object_id,
                            a.payload,
                            a.payload_hash,
                            a.prev_hash,
                            a.row_hash,
                            actor_name,
                        ]
                    })
                    .collect(),
            )
        }
    };
    let n = rows.len();
    let text = csv_text(&header, rows)?;
    w.append(
        Entry::new("export.created", "event", &e.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "kind": kind.as_str(), "rows": n })),
    )
    .await?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_neutralized_and_plain_ones_kept() {
        for bad in [
            "=IMPORTXML(\"http://x\")",
            "+1",
            "-2+3",
            "@SUM(A1)",
            "\tx",
            "\rx",
        ] {
            assert!(neutralize(bad).starts_with('\''), "{bad:?} not neutralized");
        }
        assert_eq!(neutralize("Plain title"), "Plain title");
        assert_eq!(neutralize(""), "");
        // Numbers stay numbers, negative ones included.
        for n in ["-0.052", "3", "12.500000", "-7"] {
            assert_eq!(neutralize(n), n);
        }
        // What a spreadsheet looks past before the formula character.
        for bad in [
            " =1+1",
            "\n=1+1",
            "|=cmd",
            " | @SUM(A1)",
            "\u{FF1D}1+1",
            "\u{FF0B}1",
            "\u{FF20}SUM(A1)",
            "-1+1",
            "-x",
        ] {
            assert!(neutralize(bad).starts_with('\''), "{bad:?} not neutralized");
        }
        let csv = csv_text(
            &hs(&["a", "b"]),
            vec![vec!["=1+1".into(), "ok, \"quoted\"".into()]],
        )
        .unwrap();
        assert_eq!(csv, "a,b\n'=1+1,\"ok, \"\"quoted\"\"\"\n");
    }
}
