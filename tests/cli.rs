//! Native smoke test of the `kubeloop` command line: the binary builds, runs and names its
//! version. It exists so that the native test run always exercises at least the shipped binary.

use std::process::Command;

#[test]
fn cli_prints_its_version() {
    let output = Command::new(env!("CARGO_BIN_EXE_kubeloop")).arg("--version").output().expect("the kubeloop binary runs");
    assert!(output.status.success(), "kubeloop --version failed: {output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(kubeloop::VERSION), "expected the version {} in {stdout:?}", kubeloop::VERSION);
}
