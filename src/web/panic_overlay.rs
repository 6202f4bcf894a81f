//! The error overlay shown when the page panics, instead of a blank or frozen page.
//!
//! It exists because the release build aborts on panic: after the hook returns, the wasm
//! instance is dead, and Yew can draw nothing more. So the overlay is built with plain DOM calls
//! (no Yew, no state of ours) while the hook runs, and its "Reset" button is a plain link to the
//! page's own address: a click reloads the page without running any of our code, and needs no
//! inline script or `eval`, so it also works under the Content-Security-Policy of `trunk serve`.
//!
//! Nothing here may panic: a panic inside the panic hook would abort before anything is shown.
//! It depends on `web-sys` only, so the browser tests can include it directly.

use wasm_bindgen::JsCast;

/// The `id` of the overlay element; at most one exists.
pub const OVERLAY_ID: &str = "panic-overlay";

/// Logs `message` to the console and shows it in the overlay, creating the overlay if needed.
pub fn show(message: &str) {
    web_sys::console::error_1(&format!("kubeloop stopped: {message}").into());
    let Some(document) = web_sys::window().and_then(|window| window.document()) else {
        return;
    };
    if let Some(existing) = document.get_element_by_id("panic-message") {
        existing.set_text_content(Some(message));
        return;
    }
    let _ = build(&document, message);
}

/// Builds the overlay and appends it to `<body>`. Errors are returned, never panicked on.
fn build(document: &web_sys::Document, message: &str) -> Option<()> {
    let overlay = element(
        document,
        "div",
        &[
            ("id", OVERLAY_ID),
            ("class", "panic-overlay"),
            ("role", "alertdialog"),
            ("aria-modal", "true"),
            ("aria-labelledby", "panic-title"),
            ("aria-describedby", "panic-message"),
        ],
    )?;
    let panel = element(document, "div", &[("class", "panic-panel")])?;

    let title = element(document, "h2", &[("id", "panic-title")])?;
    title.set_text_content(Some("kubeloop stopped"));
    let explain = element(document, "p", &[])?;
    explain.set_text_content(Some("Something went wrong inside the page. Reset reloads it from the start."));
    let details = element(document, "pre", &[("id", "panic-message"), ("class", "panic-message")])?;
    details.set_text_content(Some(message));

    // The page's address without its fragment: following it always loads the page anew.
    let href = document.url().ok()?;
    let href = href.split('#').next().unwrap_or_default();
    let reset = element(document, "a", &[("href", href), ("class", "panic-reset")])?;
    reset.set_text_content(Some("Reset"));

    for child in [&title, &explain, &details, &reset] {
        panel.append_child(child).ok()?;
    }
    overlay.append_child(&panel).ok()?;
    document.body()?.append_child(&overlay).ok()?;
    if let Ok(link) = reset.dyn_into::<web_sys::HtmlElement>() {
        let _ = link.focus();
    }
    Some(())
}

/// Creates `<tag>` with the given attributes.
fn element(document: &web_sys::Document, tag: &str, attributes: &[(&str, &str)]) -> Option<web_sys::Element> {
    let element = document.create_element(tag).ok()?;
    for (name, value) in attributes {
        element.set_attribute(name, value).ok()?;
    }
    Some(element)
}
