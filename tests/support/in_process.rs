//! What the in-process test binaries (`server/tests/inprocess/`, `server/tests/fuzz/`)
//! share: the services `serve` builds, a site administrator, a committed fixture import.

use std::sync::Arc;

use serde_json::Value;
use verdict::config::Limits;
use verdict::crypto::signing::Signer25519;
use verdict::db::Db;
use verdict::domain::{Actor, Write, accounts, import};
use verdict::graphql::{Services, bus::Bus};

/// The services `serve` builds on `db`, with `limits`, signing with `signer`.
pub fn services(db: &Db, limits: Limits, signer: Arc<Signer25519>) -> Services {
    Services {
        db: db.clone(),
        bus: Bus::new(),
        limits,
        served_over_tls: false,
        signer,
        parsed_runs: Default::default(),
        previews: Default::default(),
        progress: Default::default(),
        feeds: Default::default(),
        calibrations: Default::default(),
        links: verdict::domain::outbox::Links::new("http://verdict.test"),
        mail: Default::default(),
        webhook_wake: Default::default(),
        webhooks: Default::default(),
    }
}

/// `root@example.org`, made a site administrator in its own transaction.
pub async fn site_admin(db: &Db) -> Actor {
    let w = Write::begin(db, None).await.expect("begin");
    accounts::admin_create(&w, "root@example.org")
        .await
        .expect("admin");
    w.commit().await.expect("commit");
    let user = verdict::domain::user_by_email(&db.conn, "root@example.org")
        .await
        .expect("read")
        .expect("the admin");
    Actor { user }
}

/// Imports `fixture` (verdict.event.v1) and commits.
pub async fn import_committed(db: &Db, fixture: Value) {
    let f = import::parse(fixture).expect("fixture parses");
    let w = Write::begin(db, None).await.expect("begin");
    import::import(&w, &f).await.expect("import");
    w.commit().await.expect("commit");
}
