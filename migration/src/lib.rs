//! Verdict's schema migrations. Both backends run the same steps; each step is written as
//! plain SQL with the few type differences spelled out, so every constraint, check and
//! trigger is visible in one place.

pub use sea_orm_migration::prelude::*;

mod m20261130_000001_core;
mod m20261130_000002_judging;
mod m20261201_000001_people;
mod m20261201_000002_descriptions_and_zones;
mod m20261201_000003_audit_notify;
mod m20261201_000004_calibration_jobs;
mod m20261201_000005_prizes;
mod m20261202_000001_voting;
mod m20261202_000002_comments;
mod m20261202_000003_webhooks;
mod m20261203_000001_erasure;
mod m20261203_000002_archived_events;
mod m20261204_160301_setup_links;
mod m20261204_160401_project_tables;
mod m20261204_190101_judge_sign_ins;
mod m20261205_000001_audit_pending;
mod m20261205_000101_pairwise;
mod m20261205_000201_track_judging_mode;
mod m20261205_030001_publication_roots;
mod m20261205_140001_publication_entry_format;
mod sql;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261130_000001_core::Migration),
            Box::new(m20261130_000002_judging::Migration),
            Box::new(m20261201_000001_people::Migration),
            Box::new(m20261201_000002_descriptions_and_zones::Migration),
            Box::new(m20261201_000003_audit_notify::Migration),
            Box::new(m20261201_000004_calibration_jobs::Migration),
            Box::new(m20261201_000005_prizes::Migration),
            Box::new(m20261202_000001_voting::Migration),
            Box::new(m20261202_000002_comments::Migration),
            Box::new(m20261202_000003_webhooks::Migration),
            Box::new(m20261203_000001_erasure::Migration),
            Box::new(m20261203_000002_archived_events::Migration),
            Box::new(m20261204_160301_setup_links::Migration),
            Box::new(m20261204_160401_project_tables::Migration),
            Box::new(m20261204_190101_judge_sign_ins::Migration),
            Box::new(m20261205_000001_audit_pending::Migration),
            Box::new(m20261205_000101_pairwise::Migration),
            Box::new(m20261205_000201_track_judging_mode::Migration),
            Box::new(m20261205_030001_publication_roots::Migration),
            Box::new(m20261205_140001_publication_entry_format::Migration),
        ]
    }
}
