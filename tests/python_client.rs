//! The official Python `kubernetes` client against `kubeloop serve`: list, watch (and a watch that
//! outlives a compaction, ends with 410 and re-lists, and one `sim watch sever` ends, whose
//! re-watch is 410 and which re-lists), create, patch, delete and the scale
//! subresource, every answer decoded into the client's typed models (`tests/python/client.py`).
//! Needs a Python with the client: `$KUBELOOP_PYTHON`, or the venv `scripts/setup.sh` installs
//! into `target/py-venv`; skipped without one, except in CI, where it fails.

#[path = "support/serve.rs"]
mod serve;

use std::path::PathBuf;

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("KUBELOOP_PYTHON").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/py-venv/bin/python");
    venv.is_file().then_some(venv)
}

#[test]
fn the_python_client_lists_watches_creates_patches_scales_and_deletes() {
    let Some(python) = python() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs the Python kubernetes client: run scripts/setup.sh or set $KUBELOOP_PYTHON");
        eprintln!("skipped: no Python kubernetes client (run scripts/setup.sh)");
        return;
    };
    let server = serve::Server::start(&["--seed", "7", "--speed", "0"]);
    server.sim("advance 30s");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/client.py");
    let out = std::process::Command::new(python).arg(script).arg(&server.url).output().expect("python runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.trim_end() == "ok", "{stdout}{stderr}");
}
