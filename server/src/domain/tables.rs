//! Expo table numbers: where a project stands on the floor, so a judge finds it. A team
//! sets its own table with its other fields (inside the submission window, see
//! `projects.rs`); organizers set or clear any project's table at any time
//! ([`set_table`]); imports bring them too.
//!
//! A table is a short label ("12", "A-07", "Hall B 3"): trimmed, one line, at most
//! [`TABLE_MAX`] characters, unique per event regardless of case (the database holds that
//! too). Lists sort tables in natural order ([`natural_cmp`]): 2 before 10, A2 before A10.

use std::cmp::Ordering;

use entity::project;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel,
    QueryFilter,
};
use serde_json::json;

use super::write::Write;
use super::{find_project, validate};
use crate::audit::Entry;
use crate::error::{AppError, AppResult};

/// The longest table label, in characters.
pub const TABLE_MAX: usize = 16;

/// A table label from a client: trimmed; empty means "no table" (`None`). Refuses, naming
/// `field` and the value, a label longer than [`TABLE_MAX`] or with control or invisible
/// characters.
pub fn parse(field: &str, raw: &str) -> AppResult<Option<String>> {
    let t = raw.trim();
    if t.is_empty() {
        return Ok(None);
    }
    if t.chars().count() > TABLE_MAX {
        return Err(AppError::bad_input(
            field,
            format!("{t:?} is longer than {TABLE_MAX} characters"),
        ));
    }
    if t.chars().any(|c| c.is_control()) {
        return Err(AppError::bad_input(
            field,
            format!("{:?} must be one line without control characters", t),
        ));
    }
    validate::line(field, t, TABLE_MAX).map(Some)
}

/// Refuses `table` when another project of `event_id` already has it (case-insensitively):
/// CONFLICT naming the table and that project. `except` is the project being changed.
pub async fn ensure_free<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
    table: &str,
    except: Option<i64>,
) -> AppResult<()> {
    let wanted = table.to_lowercase();
    let holders = project::Entity::find()
        .filter(project::Column::EventId.eq(event_id))
        .filter(project::Column::ExpoTable.is_not_null())
        .all(db)
        .await?;
    if let Some(other) = holders.iter().find(|p| {
        Some(p.id) != except
            && p.expo_table
                .as_deref()
                .is_some_and(|t| t.to_lowercase() == wanted)
    }) {
        return Err(AppError::conflict(format!(
            "table {table:?} is already taken by the project {:?}",
            other.title
        )));
    }
    Ok(())
}

/// Sets or clears (`raw` empty or `None`) the table of the project with `id`, for the
/// organizers of its event, at any time. CONFLICT when the project is at that table already
/// (the audit log records only real changes) or another project of the event has it.
pub async fn set_table(w: &Write, id: &str, raw: Option<&str>) -> AppResult<project::Model> {
    let txn = w.txn();
    let p = find_project(txn, id, None)
        .await?
        .ok_or(AppError::NotFound("project"))?;
    let e = w.event_by_id(p.event_id).await?;
    if e.archived_at.is_some() {
        return Err(AppError::NotFound("project"));
    }
    let org = w.organizer(&e).await?;
    let table = parse("table", raw.unwrap_or(""))?;
    if table == p.expo_table {
        return Err(AppError::conflict(match &table {
            Some(t) => format!("the project is at table {t:?} already"),
            None => "the project has no table already".to_owned(),
        }));
    }
    if let Some(t) = &table {
        ensure_free(txn, e.id, t, Some(p.id)).await?;
    }
    let from = p.expo_table.clone();
    let mut am = p.into_active_model();
    am.expo_table = Set(table.clone());
    am.updated_at = Set(w.now());
    let p = am.update(txn).await?;
    w.append(
        Entry::new("project.table_set", "project", &p.public_id)
            .by(org.actor().public_id())
            .in_event(&e.external_id)
            .with(json!({ "table": table, "from": from })),
    )
    .await?;
    Ok(p)
}

/// Natural order of table labels, case-insensitive: runs of digits compare by their value
/// (2 before 10, 007 beside 7), the rest by text. Labels equal so far fall back to plain
/// comparison, so the order is total.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(pb.iter()) {
        let o = match (x, y) {
            (Part::Num(x), Part::Num(y)) => x.len().cmp(&y.len()).then_with(|| x.cmp(y)),
            (Part::Num(_), Part::Text(_)) => Ordering::Less,
            (Part::Text(_), Part::Num(_)) => Ordering::Greater,
            (Part::Text(x), Part::Text(y)) => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

enum Part {
    /// Digits without leading zeros ("" for zero).
    Num(String),
    /// Lower-cased text between digit runs.
    Text(String),
}

fn parts(s: &str) -> Vec<Part> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        let digit = c.is_ascii_digit();
        let mut run = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_digit() != digit {
                break;
            }
            run.push(c);
            chars.next();
        }
        out.push(if digit {
            Part::Num(run.trim_start_matches('0').to_owned())
        } else {
            Part::Text(run.to_lowercase())
        });
    }
    out
}

/// The order a judge walks their queue in: the projects with a table in natural table
/// order, starting from a point of the round that differs per judge (`start`: a judge's own
/// stable hash per item, the smallest begins), so judges do not all crowd the first table;
/// then the projects without a table, by that hash alone.
pub fn floor_order<T>(
    items: Vec<T>,
    table: impl Fn(&T) -> Option<String>,
    start: impl Fn(&T) -> String,
) -> Vec<T> {
    let (mut tabled, mut rest): (Vec<T>, Vec<T>) =
        items.into_iter().partition(|i| table(i).is_some());
    tabled
        .sort_by(|a, b| natural_cmp(&table(a).unwrap_or_default(), &table(b).unwrap_or_default()));
    if let Some(first) = tabled
        .iter()
        .enumerate()
        .min_by_key(|(_, i)| start(i))
        .map(|(n, _)| n)
    {
        tabled.rotate_left(first);
    }
    rest.sort_by_key(|i| start(i));
    tabled.extend(rest);
    tabled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_puts_2_before_10() {
        let mut v = vec![
            "10", "2", "A10", "a2", "B1", "1", "007", "Hall 3", "hall 12",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            vec![
                "1", "2", "007", "10", "a2", "A10", "B1", "Hall 3", "hall 12"
            ]
        );
    }

    #[test]
    fn labels_are_trimmed_bounded_and_named() {
        assert_eq!(parse("table", "  12 ").unwrap(), Some("12".to_owned()));
        assert_eq!(parse("table", "   ").unwrap(), None);
        let long = "x".repeat(TABLE_MAX + 1);
        let e = parse("table", &long).unwrap_err();
        assert!(
            matches!(&e, AppError::BadInput { field, message } if field == "table" && message.contains(&long)),
            "{e:?}"
        );
        assert!(parse("table", "1\n2").is_err());
        assert!(parse("table", "1\u{202E}2").is_err());
    }

    #[test]
    fn floor_order_walks_tables_in_order_from_a_per_judge_start() {
        let items = vec![("10", "c"), ("2", "z"), ("3", "a"), ("", "b"), ("1", "y")];
        let table = |i: &(&str, &str)| Some(i.0.to_owned()).filter(|t| !t.is_empty());
        let order = floor_order(items, table, |i| i.1.to_owned());
        let tables: Vec<&str> = order.iter().map(|i| i.0).collect();
        // Starts at table 3 (smallest hash "a"), goes round, then the one without a table.
        assert_eq!(tables, vec!["3", "10", "1", "2", ""]);
    }
}
