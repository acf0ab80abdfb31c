//! The `comparisons` table: a judge's verdict on a pair of projects ("`better` was better
//! than `worse`"), one row per judge and unordered pair, revised in place (`version`).
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "comparisons")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    /// The judge's membership (its role is `judge`; the database holds that).
    pub judge_id: i64,
    pub better_id: i64,
    pub worse_id: i64,
    /// The project the judge was at when comparing: `better_id` or `worse_id`; the other
    /// one is the project they had seen before it.
    pub current_id: i64,
    /// 1 when recorded; each revision adds one.
    pub version: i32,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// The project the judge had seen before [`Model::current_id`].
    pub fn previous_id(&self) -> i64 {
        if self.current_id == self.better_id {
            self.worse_id
        } else {
            self.better_id
        }
    }

    /// Whether the comparison is of `a` and `b`, whichever way round.
    pub fn is_of(&self, a: i64, b: i64) -> bool {
        (self.better_id, self.worse_id) == (a, b) || (self.better_id, self.worse_id) == (b, a)
    }
}
