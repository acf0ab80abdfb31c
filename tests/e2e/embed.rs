//! The embeddable gallery: `/embed/{slug}` lists the event's submitted projects (public
//! data only, every text escaped) and is the one response any site may frame; every other
//! response says `X-Frame-Options: DENY`. `/embed.js` inserts it.

use serde_json::json;

use crate::harness::{App, judged_fixture, unique};

e2e! {
    the_gallery_is_framable_escaped_and_public_only,
}

const IMPORT: &str = "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }";

async fn the_gallery_is_framable_escaped_and_public_only(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let mut fixture = judged_fixture(&tag);
    // A title that tries to be markup, a summary with a quote, and a draft.
    fixture["projects"][3]["title"] = json!("<script>alert('x')</script>");
    fixture["projects"][3]["summary"] = json!("\"Quoted\" & <b>bold</b>");
    fixture["teams"].as_array_mut().expect("teams").push(
        json!({ "external_id": format!("td_{tag}"), "name": "Drafting team", "members": [] }),
    );
    fixture["projects"].as_array_mut().expect("projects").push(json!({
        "external_id": format!("pd_{tag}"), "team": format!("td_{tag}"), "track": format!("trk_{tag}"),
        "title": "Secret draft", "tagline": "", "summary": "", "repo_url": "", "demo_url": "",
        "tags": [], "status": "draft", "submitted_at": null
    }));
    app.ok(Some(&admin), IMPORT, json!({ "f": fixture })).await;
    let slug = format!("csv-{tag}");

    let page = app.get(&format!("/embed/{slug}")).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(
        page.header("content-type").as_deref(),
        Some("text/html; charset=utf-8")
    );
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(csp.contains("frame-ancestors *"), "{csp}");
    assert!(csp.contains("default-src 'none'"), "no script runs: {csp}");
    assert_eq!(
        page.header("x-frame-options"),
        None,
        "the gallery may be framed"
    );
    let html = &page.text;
    assert!(
        html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
        "the title is shown as text: {html}"
    );
    assert!(!html.contains("<script>"), "no markup from data: {html}");
    assert!(html.contains("&quot;Quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;"));
    assert!(
        html.contains("Only track") && html.contains("@SUM(A1)"),
        "track and team: {html}"
    );
    assert!(
        !html.contains("Secret draft"),
        "drafts are not public: {html}"
    );
    assert!(html.contains("4 submitted projects"), "{html}");
    assert!(
        !html.contains("example.org"),
        "no email or other personal data: {html}"
    );

    // Everything else refuses to be framed.
    for path in [
        "/",
        &format!("/e/{slug}"),
        "/graphql?query=%7B__typename%7D",
        "/healthz",
    ] {
        let r = app.get(path).await;
        assert_eq!(
            r.header("x-frame-options").as_deref(),
            Some("DENY"),
            "{path} may not be framed"
        );
    }

    let missing = app.get("/embed/no-such-event-here").await;
    assert_eq!(missing.status, 404);
    assert!(
        missing
            .header("content-security-policy")
            .is_some_and(|c| c.contains("frame-ancestors *"))
    );

    let loader = app.get("/embed.js").await;
    assert_eq!(loader.status, 200);
    assert!(
        loader
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/javascript"))
    );
    assert!(loader.text.contains("createElement('iframe')"));
    assert!(loader.text.contains("'/embed/' + encodeURIComponent(slug)"));
}
