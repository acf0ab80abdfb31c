//! No query writes: every field reachable from `Query`, run as a site admin, leaves every table as it was.

use super::*;

/// Row counts of every table of the schema, by name, and the audit head.
async fn snapshot(db: &Db) -> (Vec<(String, i64)>, i64) {
    let list = match db.backend() {
        sea_orm::DbBackend::Postgres => {
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
        }
        _ => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1"
        }
    };
    let rows = db
        .conn
        .query_all_raw(sea_orm::Statement::from_string(db.backend(), list))
        .await
        .expect("table list");
    let mut counts = vec![];
    for r in rows {
        let name: String = r.try_get("", "name").expect("table name");
        let c = db
            .conn
            .query_one_raw(sea_orm::Statement::from_string(
                db.backend(),
                format!("SELECT count(*) AS n FROM {name}"),
            ))
            .await
            .expect("count")
            .expect("a row");
        let n: i64 = c.try_get("", "n").expect("count value");
        counts.push((name, n));
    }
    assert!(
        counts.len() >= 15,
        "the walk found too few tables: {counts:?}"
    );
    let head = match audit::verify(&db.conn).await.expect("verify") {
        Verification::Intact { seq, .. } => seq,
        other => panic!("audit chain: {other:?}"),
    };
    (counts, head)
}

/// One query per field reachable from `Query`, each reached by its shortest path, with the
/// required arguments filled from the fixture. Returns (field, query) pairs.
fn every_query_field() -> Vec<(String, String)> {
    use async_graphql::parser::types::{BaseType, TypeKind, TypeSystemDefinition};
    use std::collections::{HashMap, HashSet, VecDeque};

    let doc = async_graphql::parser::parse_schema(graphql::sdl()).expect("the SDL parses");
    // Per object type: (field, [(argument, its named type, required)], the field's type).
    type Field = (String, Vec<(String, String, bool)>, String);
    let mut objects: HashMap<String, Vec<Field>> = HashMap::new();
    let mut enums: HashMap<String, String> = HashMap::new();
    for def in &doc.definitions {
        let TypeSystemDefinition::Type(t) = def else {
            continue;
        };
        let name = t.node.name.node.to_string();
        match &t.node.kind {
            TypeKind::Object(o) => {
                let fields = o
                    .fields
                    .iter()
                    .map(|f| {
                        let args = f
                            .node
                            .arguments
                            .iter()
                            .map(|a| {
                                let ty = &a.node.ty.node;
                                let base = match &ty.base {
                                    BaseType::Named(n) => n.to_string(),
                                    BaseType::List(_) => "List".to_owned(),
                                };
                                (a.node.name.node.to_string(), base, !ty.nullable)
                            })
                            .collect();
                        let mut ty = &f.node.ty.node;
                        while let BaseType::List(inner) = &ty.base {
                            ty = inner;
                        }
                        let BaseType::Named(out) = &ty.base else {
                            unreachable!()
                        };
                        (f.node.name.node.to_string(), args, out.to_string())
                    })
                    .collect();
                objects.insert(name, fields);
            }
            TypeKind::Enum(e) => {
                if let Some(v) = e.values.first() {
                    enums.insert(name, v.node.value.node.to_string());
                }
            }
            _ => {}
        }
    }
    let arg_value = |field: &str, arg: &str, ty: &str| -> String {
        match (ty, arg) {
            ("String", "event" | "slug") => format!("\"{}\"", spring_hack::SLUG),
            ("String", _) => "\"x\"".to_owned(),
            ("ID", _) if field == "project" || arg == "project" => "\"prj_001\"".to_owned(),
            ("ID", "team") => "\"tm_001\"".to_owned(),
            ("ID", "track") => "\"trk_01\"".to_owned(),
            ("ID", "judge") => "\"jdg_01\"".to_owned(),
            ("ID", _) => "\"prj_001\"".to_owned(),
            ("Int", _) => "5".to_owned(),
            ("Float", _) => "1.0".to_owned(),
            ("Boolean", _) => "false".to_owned(),
            (other, _) => enums
                .get(other)
                .cloned()
                .unwrap_or_else(|| panic!("no test value for {field}({arg}: {other})")),
        }
    };
    // Breadth first from Query: each (type, field) once, by its shortest path.
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut queue: VecDeque<(String, Vec<String>)> = VecDeque::from([("Query".to_owned(), vec![])]);
    let mut visited_types: HashSet<String> = HashSet::new();
    let mut out = vec![];
    while let Some((ty, path)) = queue.pop_front() {
        if !visited_types.insert(ty.clone()) {
            continue;
        }
        let Some(fields) = objects.get(&ty) else {
            continue;
        };
        for (name, args, out_ty) in fields {
            if !seen.insert((ty.clone(), name.clone())) {
                continue;
            }
            let given: Vec<String> = args
                .iter()
                .filter(|(_, _, required)| *required)
                .map(|(a, t, _)| format!("{a}: {}", arg_value(name, a, t)))
                .collect();
            let call = if given.is_empty() {
                name.clone()
            } else {
                format!("{name}({})", given.join(", "))
            };
            let leaf = if objects.contains_key(out_ty) {
                format!("{call} {{ __typename }}")
            } else {
                call.clone()
            };
            let mut q = leaf;
            for outer in path.iter().rev() {
                q = format!("{outer} {{ {q} }}");
            }
            out.push((format!("{ty}.{name}"), format!("{{ {q} }}")));
            if objects.contains_key(out_ty) {
                let mut next = path.clone();
                next.push(call);
                queue.push_back((out_ty.clone(), next));
            }
        }
    }
    out
}

/// No query writes: every field reachable from `Query`, run as a site admin on an event
/// with reviews, a calibration run and a publication, leaves every table's row count and
/// the audit head as they were. (`Event.export`, a query that appended an audit entry, was
/// the case that made this a class to close.)
#[tokio::test]
async fn no_query_writes() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
            .await
            .expect("event");
        let signer = services(&t.db).signer.clone();
        let run = verdict::domain::results::run_calibration(
            &t.db,
            &admin,
            &event,
            &signer,
            Some(1),
            Some(20),
        )
        .await
        .expect("run");
        let w = Write::begin(&t.db, Some(admin.clone()))
            .await
            .expect("begin");
        let org = w.organizer(&event).await.expect("organizer");
        verdict::domain::results::publish(&w, org, &signer, &run.public_id, false)
            .await
            .expect("publish");
        w.commit().await.expect("commit");

        let before = snapshot(&t.db).await;
        let queries = every_query_field();
        assert!(queries.len() > 200, "too few fields: {}", queries.len());
        eprintln!("{}: {} fields reachable from Query", t.name, queries.len());
        let mut answered = 0;
        for (field, q) in &queries {
            let r = execute(&t.db, Some(&admin), q).await;
            if r.errors.is_empty() {
                answered += 1;
            } else {
                eprintln!("{}: {field}: {:?}", t.name, r.errors[0].message);
            }
        }
        assert!(
            answered * 10 >= queries.len() * 9,
            "{}: most fields answer for a site admin: {answered} of {}",
            t.name,
            queries.len()
        );
        assert_eq!(
            snapshot(&t.db).await,
            before,
            "{}: a query changed a table or the audit log",
            t.name
        );
    }
}
