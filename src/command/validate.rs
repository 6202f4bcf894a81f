//! Checking a manifest as the API server would, without storing it: the editor's
//! validate-as-you-type.
//!
//! It is `kubectl apply --dry-run=server` on the text: decoded with kubectl's messages, defaulted
//! and validated with the API server's, merged with the live object if there is one. Nothing is
//! written and nothing is traced, so validating on every keystroke leaves the simulation alone.

use super::kubectl::apply;
use super::Session;

/// The file name the editor's text is applied as (`kubectl apply -f manifest.yaml`).
pub const EDITOR_FILE: &str = "manifest.yaml";

impl Session {
    /// What `kubectl apply -f manifest.yaml --dry-run=server` would print for `text`:
    /// Ok(`deployment.apps/web configured (server dry run)` lines) or Err(kubectl's error).
    pub fn validate_manifest(&mut self, text: &str) -> Result<String, String> {
        if text.trim().is_empty() {
            return Err("error: no objects passed to apply".into());
        }
        let previous = self.files.map.insert(EDITOR_FILE.to_string(), text.to_string());
        let args: Vec<String> = ["-f", EDITOR_FILE, "--dry-run=server"].iter().map(|s| s.to_string()).collect();
        let out = apply::run_apply(self, &args, None);
        match previous {
            Some(p) => self.files.map.insert(EDITOR_FILE.to_string(), p),
            None => self.files.map.remove(EDITOR_FILE),
        };
        match (out.ok, out.stdout.is_empty()) {
            (true, false) => Ok(out.stdout.trim_end().to_string()),
            (true, true) => Err("error: no objects passed to apply".into()),
            (false, _) => Err(out.stderr.trim_end().to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::kubectl::examples::{NGINX_DEPLOYMENT, SIMPLE_POD};
    use crate::command::Scenario;

    fn session() -> Session {
        Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap()
    }

    #[test]
    fn a_good_manifest_validates_and_nothing_changes() {
        let mut s = session();
        let revision = s.sim().api().revision();
        let trace = s.sim().trace().count();
        assert_eq!(s.validate_manifest(NGINX_DEPLOYMENT), Ok("deployment.apps/nginx-deployment created (server dry run)".into()));
        assert_eq!(s.validate_manifest(SIMPLE_POD), Ok("pod/nginx created (server dry run)".into()));
        assert_eq!((s.sim().api().revision(), s.sim().trace().count()), (revision, trace));
        assert!(s.files().read(EDITOR_FILE).is_err(), "the scratch file is not left behind");
    }

    #[test]
    fn a_bad_manifest_gets_the_api_servers_message() {
        let mut s = session();
        let bad = NGINX_DEPLOYMENT.replace("replicas: 3", "replicas: -1");
        assert_eq!(
            s.validate_manifest(&bad),
            Err("The Deployment \"nginx-deployment\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
                .into())
        );
        let err = s.validate_manifest("kind: Deployment\napiVersion: apps/v1\nmetadata: [").unwrap_err();
        assert!(err.starts_with("error: error parsing manifest.yaml: error converting YAML to JSON: yaml: "), "{err}");
        assert_eq!(s.validate_manifest("  \n"), Err("error: no objects passed to apply".into()));
    }
}
