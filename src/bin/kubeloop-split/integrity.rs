//! Trunk's subresource-integrity hashes in `index.html`, brought up to date for the files the
//! split rewrote: the browser refuses a preloaded script or wasm whose SHA-384 differs from its
//! tag's `integrity`, so the page would not start.

use base64::Engine;
use sha2::{Digest, Sha384};

/// `html` with the `integrity` of every tag whose `href` is `./{file}` set to `bytes`' hash.
/// A page built without integrity attributes is returned unchanged.
pub fn update(html: &str, file: &str, bytes: &[u8]) -> String {
    let digest = base64::engine::general_purpose::STANDARD.encode(Sha384::digest(bytes));
    let href = format!("href=\"./{file}\"");
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find(&href) {
        let tag_end = rest[at..].find('>').map_or(rest.len(), |end| at + end);
        let tag = &rest[at..tag_end];
        out.push_str(&rest[..at]);
        match tag.find("integrity=\"sha384-") {
            Some(start) => {
                let value = start + "integrity=\"sha384-".len();
                let value_end = tag[value..].find('"').map_or(tag.len(), |end| value + end);
                out.push_str(&tag[..value]);
                out.push_str(&digest);
                out.push_str(&tag[value_end..]);
            }
            None => out.push_str(tag),
        }
        rest = &rest[tag_end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_files_hash_is_replaced_and_others_are_left() {
        let html = r#"<link rel="modulepreload" href="./a.js" integrity="sha384-OLD"><link href="./b.wasm" integrity="sha384-KEEP">"#;
        let updated = update(html, "a.js", b"abc");
        let expected = base64::engine::general_purpose::STANDARD.encode(Sha384::digest(b"abc"));
        assert!(updated.contains(&format!(r#"href="./a.js" integrity="sha384-{expected}">"#)), "{updated}");
        assert!(updated.contains(r#"href="./b.wasm" integrity="sha384-KEEP""#));
        assert_eq!(update("<p>no tags</p>", "a.js", b"abc"), "<p>no tags</p>");
    }
}
