//! The page's first picture, rendered at build time so a browser can paint it before the wasm
//! arrives (issue 14: on a slow link the wasm alone takes seconds).
//!
//! It exists so that the pre-rendered markup can never drift from the page: it is the same
//! [`App`] over the same [`Engine`], started from the same address (none: the default scenario),
//! rendered by Yew's server-side renderer instead of mounted in a browser. Only the first render
//! runs — effects, where the app starts its frame loop, reads the wall clock and marks itself
//! ready, never run here. The engine first plays the page's opening frames ([`play_opening`]:
//! at time 0 the cluster has no node yet), as the page at the bare address does before it
//! mounts, so the picture is exactly the live page's first frame and the live page goes on
//! from it (see `main.rs`).
//!
//! This is the page binary built natively with the `ssr` feature, run by Trunk's `post_build`
//! hook (Trunk.toml): `kubeloop-web prerender [INDEX_HTML]` fills the empty `<div id="app">` of
//! the staged `index.html` (default `$TRUNK_STAGING_DIR/index.html`).

#[cfg(not(feature = "ssr"))]
compile_error!("natively the page binary only pre-renders the page: build it with --features ssr");

use std::process::ExitCode;

use crate::app::{App, AppProps};
use crate::host::{Host, Shared};
use crate::play_opening;
use kubeloop::play::Engine;
use kubeloop::view::page;

/// The element the page mounts into, exactly as `index.html` has it before the pre-render.
const EMPTY_ROOT: &str = r#"<div id="app"></div>"#;

/// `kubeloop-web prerender [INDEX_HTML]`.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = match args.as_slice() {
        [verb] if verb == "prerender" => match std::env::var("TRUNK_STAGING_DIR") {
            Ok(dir) => std::path::Path::new(&dir).join("index.html"),
            Err(_) => return fail("TRUNK_STAGING_DIR is not set: give the index.html to fill"),
        },
        [verb, path] if verb == "prerender" => path.into(),
        _ => return fail("usage: kubeloop-web prerender [INDEX_HTML]"),
    };
    let html = match std::fs::read_to_string(&path) {
        Ok(html) => html,
        Err(e) => return fail(&format!("cannot read {}: {e}", path.display())),
    };
    let markup = match first_frame() {
        Ok(markup) => markup,
        Err(e) => return fail(&format!("cannot start a runtime to render on: {e}")),
    };
    let filled = match fill(&html, &markup) {
        Ok(filled) => filled,
        Err(e) => return fail(&format!("{}: {e}", path.display())),
    };
    if let Err(e) = std::fs::write(&path, filled) {
        return fail(&format!("cannot write {}: {e}", path.display()));
    }
    ExitCode::SUCCESS
}

fn fail(message: &str) -> ExitCode {
    eprintln!("prerender: {message}");
    ExitCode::FAILURE
}

/// The markup of the page's first frame at the bare address: what `main.rs` mounts, rendered.
fn first_frame() -> std::io::Result<String> {
    let (params, errors) = page::parse_query("");
    let mut engine = Engine::new(params, errors);
    play_opening(&mut engine, 0.0);
    let shared = Shared::new(engine, Host::Page);
    let renderer = yew::LocalServerRenderer::<App>::with_props(AppProps { shared, embedded: false }).hydratable(false);
    // A LocalSet on a current-thread runtime: what Yew's local renderer expects to run on (it
    // may spawn local tasks), with no thread pool.
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    Ok(tokio::task::LocalSet::new().block_on(&runtime, renderer.render()))
}

/// `html` with the empty root filled with `markup` and marked busy (not yet interactive) until
/// the app mounts. Exactly one empty root must be there: a second run, or an `index.html` whose
/// root changed shape, is an error rather than a page without its picture.
fn fill(html: &str, markup: &str) -> Result<String, String> {
    match html.matches(EMPTY_ROOT).count() {
        1 => Ok(html.replacen(EMPTY_ROOT, &format!(r#"<div id="app" aria-busy="true">{markup}</div>"#), 1)),
        0 => Err(format!("no empty {EMPTY_ROOT} to fill (already pre-rendered?)")),
        n => Err(format!("{n} copies of {EMPTY_ROOT}; expected one")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picture_is_the_default_cluster_with_both_nodes_at_16_ms() {
        let markup = first_frame().unwrap();
        assert_eq!(markup.matches(r#"data-testid="node""#).count(), 2, "{markup}");
        assert!(markup.contains(r#"data-name="node-1""#) && markup.contains(r#"data-name="node-2""#));
        // The opening's one 16 ms frame registers both kubelets' Nodes; no pod exists yet.
        assert!(markup.contains(r#"data-sim-time="16""#), "{markup}");
        assert_eq!(markup.matches(r#"data-testid="pod""#).count(), 0);
    }

    #[test]
    fn fill_puts_the_markup_in_the_one_empty_root_and_marks_it_busy() {
        let html = r#"<body><div id="app"></div><noscript>x</noscript></body>"#;
        assert_eq!(
            fill(html, "<p>hi</p>").unwrap(),
            r#"<body><div id="app" aria-busy="true"><p>hi</p></div><noscript>x</noscript></body>"#
        );
    }

    #[test]
    fn fill_refuses_a_page_already_filled_or_with_two_roots() {
        let filled = fill(EMPTY_ROOT, "<p>hi</p>").unwrap();
        assert!(fill(&filled, "<p>hi</p>").unwrap_err().contains("already pre-rendered"));
        assert!(fill(&EMPTY_ROOT.repeat(2), "").unwrap_err().contains("2 copies"));
    }
}
