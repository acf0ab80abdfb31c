//! Relay connections with keyset pagination (`first`/`after`, ascending by key). Each
//! connection type's description is given where the schema is assembled
//! (`graphql::registry`).

use async_graphql::connection::{Connection, Edge, EmptyFields};
use async_graphql::{Context, SimpleObject};
use sea_orm::{
    ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Select,
};

use super::context::{CtxExt, ResultExt};
use crate::error::AppError;

/// Extra fields of every connection.
#[derive(SimpleObject)]
pub struct Totals {
    /// The number of items across all pages.
    pub total_count: i64,
}

pub type Page<N> = Connection<String, N, Totals, EmptyFields>;

fn cursor(key: i64) -> String {
    format!("c{key}")
}

fn decode(after: Option<String>) -> Result<i64, AppError> {
    match after {
        None => Ok(i64::MIN),
        Some(c) => c
            .strip_prefix('c')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| AppError::bad_input("after", "is not a cursor from this connection")),
    }
}

/// One page of `select`, ordered by `key` ascending, starting after the `after` cursor.
pub async fn page<E, N>(
    ctx: &Context<'_>,
    select: Select<E>,
    key: E::Column,
    key_of: impl Fn(&E::Model) -> i64,
    first: Option<i32>,
    after: Option<String>,
    node: impl Fn(E::Model) -> N,
) -> async_graphql::Result<Page<N>>
where
    E: EntityTrait,
    E::Model: Sync,
    N: async_graphql::OutputType,
{
    let limit = ctx.page_size(first)?;
    let after = decode(after).gql(ctx)?;
    let db = &ctx.db().conn;
    // Counted only when asked for: a gallery page that shows no total costs no count.
    let total = if ctx.look_ahead().field("totalCount").exists() {
        select.clone().count(db).await.gql(ctx)? as i64
    } else {
        0
    };
    let mut rows = select
        .filter(key.gt(after))
        .order_by_asc(key)
        .limit(limit + 1)
        .all(db)
        .await
        .gql(ctx)?;
    let has_next = rows.len() as u64 > limit;
    rows.truncate(limit as usize);
    let mut conn = Connection::with_additional_fields(
        after != i64::MIN,
        has_next,
        Totals { total_count: total },
    );
    conn.edges.extend(
        rows.into_iter()
            .map(|r| Edge::new(cursor(key_of(&r)), node(r))),
    );
    Ok(conn)
}

/// One page of a list already in memory (a frozen ranking), in its order: the cursor is
/// the position, which never moves because the list never changes.
pub fn page_of_list<N: async_graphql::OutputType>(
    ctx: &Context<'_>,
    items: Vec<N>,
    first: Option<i32>,
    after: Option<String>,
) -> async_graphql::Result<Page<N>> {
    let limit = ctx.page_size(first)? as usize;
    let after = decode(after).gql(ctx)?;
    let start = usize::try_from(after.saturating_add(1)).unwrap_or(0);
    let total = items.len();
    let end = start.saturating_add(limit).min(total);
    let mut conn = Connection::with_additional_fields(
        after != i64::MIN,
        end < total,
        Totals {
            total_count: total as i64,
        },
    );
    conn.edges.extend(
        items
            .into_iter()
            .enumerate()
            .skip(start)
            .take(end.saturating_sub(start))
            .map(|(i, n)| Edge::new(cursor(i as i64), n)),
    );
    Ok(conn)
}
