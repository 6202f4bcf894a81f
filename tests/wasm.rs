//! Tests that run in headless Chromium through `wasm-bindgen-test`.
//!
//! They exist to prove, on every run, that the library works compiled to wasm32 inside a real
//! browser, not only natively. Run with `cargo test --target wasm32-unknown-unknown --test wasm`;
//! `.cargo/config.toml` makes `wasm-bindgen-test-runner` the runner and `webdriver.json` passes
//! Chromium the flags these machines need. Natively this file compiles to nothing.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

// The page's panic overlay uses only web-sys and js-sys, so it is tested here, in a real DOM.
#[path = "../src/web/panic_overlay.rs"]
#[allow(dead_code)]
mod panic_overlay;

fn document() -> web_sys::Document {
    web_sys::window().and_then(|window| window.document()).expect("the test runs in a browser page")
}

#[wasm_bindgen_test]
fn version_is_a_semver_in_the_browser() {
    let parts: Vec<&str> = kubeloop::VERSION.split('.').collect();
    assert_eq!(parts.len(), 3, "VERSION {:?} is not MAJOR.MINOR.PATCH", kubeloop::VERSION);
    assert!(parts.iter().all(|part| part.parse::<u32>().is_ok()));
}

#[wasm_bindgen_test]
fn runs_in_a_real_dom() {
    let document = document();
    let body = document.body().expect("the test page has a body");
    let probe = document.create_element("p").unwrap();
    probe.set_text_content(Some(kubeloop::VERSION));
    body.append_child(&probe).unwrap();
    assert_eq!(body.last_child().unwrap().text_content().as_deref(), Some(kubeloop::VERSION));
    body.remove_child(&probe).unwrap();
}

#[wasm_bindgen_test]
fn panic_overlay_shows_the_message_and_a_reset_link_once() {
    let document = document();
    panic_overlay::show("first failure");
    panic_overlay::show("second failure");

    let overlays = document.query_selector_all(".panic-overlay").unwrap();
    assert_eq!(overlays.length(), 1, "a second panic reuses the overlay");
    let overlay = document.get_element_by_id(panic_overlay::OVERLAY_ID).unwrap();
    assert_eq!(overlay.get_attribute("role").as_deref(), Some("alertdialog"));
    let message = document.get_element_by_id("panic-message").unwrap();
    assert_eq!(message.text_content().as_deref(), Some("second failure"));
    let reset = overlay.query_selector("a.panic-reset").unwrap().expect("a Reset link");
    assert!(reset.get_attribute("href").is_some_and(|href| !href.contains('#')));
    assert_eq!(reset.text_content().as_deref(), Some("Reset"));

    overlay.remove();
}

/// The browser replays the reference run and must produce the very trace the native build did.
#[wasm_bindgen_test]
fn the_trace_hash_in_the_browser_equals_the_native_one() {
    let (hash, count) = kubeloop::sim::reference::worked_example(7).expect("the reference run completes");
    let native = include_str!("golden/worked-example-seed-7.txt").trim();
    assert_eq!(format!("{hash:016x} {count}"), native);
}

/// The page's view module works in the browser as it does natively: the worked example seen
/// through the cluster tracker and the event log.
#[wasm_bindgen_test]
fn the_page_view_follows_the_worked_example_in_the_browser() {
    use kubeloop::command::{Scenario, Session};
    use kubeloop::model::Duration;
    use kubeloop::view::{ClusterTracker, EventLog};

    let mut session = Session::new(Scenario::builtin("default").expect("built in"), Some(1)).expect("starts");
    session.settle(Duration::mins(2)).expect("settles");
    let mut cluster = ClusterTracker::new();
    let mut log = EventLog::new();
    cluster.update(session.sim());
    log.update(session.sim());
    let running: Vec<String> =
        cluster.view().nodes.iter().flat_map(|n| n.pods.iter()).filter(|p| p.status == "Running").map(|p| p.name.clone()).collect();
    assert_eq!(running.len(), 3);
    assert_eq!(cluster.view().nodes.len(), 2);

    let out = session.execute(&kubeloop::view::page::kill_command("default", &running[0]));
    assert!(out.ok, "{out:?}");
    session.settle(Duration::mins(2)).expect("settles again");
    cluster.update(session.sim());
    log.update(session.sim());
    let replacement =
        cluster.view().nodes.iter().flat_map(|n| n.pods.iter()).find(|p| !running.contains(&p.name)).expect("a replacement").name.clone();
    assert_eq!(log.chain_reasons("default", &replacement), ["SuccessfulCreate", "Scheduled", "Pulled", "Created", "Started"]);
}
