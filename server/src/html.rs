//! HTML escaping, for the pages and mail the server writes itself. On the ground floor:
//! the mail templates (`domain::outbox`) and the embeddable gallery (`http::embed`) both
//! use it.

/// Text made safe inside HTML elements and quoted attributes.
pub fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_five_characters_that_matter_are_escaped() {
        assert_eq!(
            super::escape_html(r#"<a href="x">Tom & Jerry's</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
    }
}
