//! The page, served by `kubeloop serve` itself under `/kubeloop/` (`--www DIR`, by default
//! `dist` when there is one), so one command gives an instructor the stage — opened at
//! `/kubeloop/?cluster=/`, attached to this server's own API on the same origin — and a
//! terminal for the real kubectl.
//!
//! It exists apart from `api.rs` because it is not the Kubernetes API: plain files, read from
//! the directory Trunk built, for GET and HEAD only. Every API path stays as it was;
//! `/kubeloop/sim` (the `sim` verbs) is still the API's.

use super::body::Body;
use hyper::{Method, Response};
use std::path::{Component, Path, PathBuf};

/// Where the page is served.
pub(crate) const PREFIX: &str = "/kubeloop/";

/// The address the stage opens at, below the server's URL.
pub(crate) const STAGE: &str = "/kubeloop/?cluster=/";

/// Whether `path` is the page's rather than the API's.
pub(crate) fn is_page(path: &str) -> bool {
    (path == "/kubeloop" || path.starts_with(PREFIX)) && path != "/kubeloop/sim"
}

/// The directory to serve: `--www DIR` (which must hold an `index.html`), else `dist` if it
/// holds one, else none.
pub fn page_dir(given: Option<&str>) -> Result<Option<PathBuf>, String> {
    match given {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.join("index.html").is_file() {
                Ok(Some(dir))
            } else {
                Err(format!("--www {}: no index.html there (build the page with `trunk build --release`; it goes to dist/)", dir.display()))
            }
        }
        None => Ok(Some(PathBuf::from("dist")).filter(|d| d.join("index.html").is_file())),
    }
}

/// Answers a request for the page's files.
pub(crate) fn serve(dir: &Path, method: &Method, path: &str) -> Response<Body> {
    if method != Method::GET && method != Method::HEAD {
        return plain(405, "the page's files are read with GET\n");
    }
    if path == "/kubeloop" {
        return Response::builder().status(301).header("location", PREFIX).body(Body::full("")).unwrap_or_else(|_| plain(500, ""));
    }
    let rest = kubeloop::view::page::percent_decode(path.strip_prefix(PREFIX).unwrap_or_default());
    let rest = if rest.is_empty() || rest.ends_with('/') { format!("{rest}index.html") } else { rest };
    // Only plain names below the directory: no `..`, no root, no drive.
    let relative = Path::new(&rest);
    if !relative.components().all(|c| matches!(c, Component::Normal(_))) {
        return plain(404, "404 page not found\n");
    }
    match std::fs::read(dir.join(relative)) {
        Ok(bytes) => {
            let body = if method == Method::HEAD { Body::full("") } else { Body::full(bytes) };
            Response::builder()
                .status(200)
                .header("content-type", content_type(relative))
                .header("cache-control", "no-cache")
                .body(body)
                .unwrap_or_else(|_| plain(500, ""))
        }
        Err(_) => plain(404, "404 page not found\n"),
    }
}

fn plain(code: u16, text: &'static str) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "text/plain; charset=utf-8")
        .body(Body::full(text))
        .unwrap_or_else(|_| Response::new(Body::full("")))
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "json" => "application/json",
        "yaml" | "yml" | "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_below_kubeloop_and_the_api_keeps_every_other_path() {
        assert!(is_page("/kubeloop/") && is_page("/kubeloop/index.html") && is_page("/kubeloop"));
        assert!(!is_page("/kubeloop/sim") && !is_page("/api/v1/pods") && !is_page("/kubeloopx"));
    }

    #[test]
    fn files_are_read_from_the_directory_only() {
        let dir = std::env::temp_dir().join(format!("kubeloop-www-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("index.html"), "<p>stage</p>").unwrap();
        let ok = serve(&dir, &Method::GET, "/kubeloop/");
        assert_eq!((ok.status().as_u16(), ok.headers()["content-type"].to_str().unwrap()), (200, "text/html; charset=utf-8"));
        assert_eq!(serve(&dir, &Method::GET, "/kubeloop/../Cargo.toml").status().as_u16(), 404);
        assert_eq!(serve(&dir, &Method::GET, "/kubeloop/%2e%2e/x").status().as_u16(), 404);
        assert_eq!(serve(&dir, &Method::GET, "/kubeloop/missing.js").status().as_u16(), 404);
        assert_eq!(serve(&dir, &Method::POST, "/kubeloop/").status().as_u16(), 405);
        assert_eq!(serve(&dir, &Method::GET, "/kubeloop").status().as_u16(), 301);
        assert!(page_dir(Some(dir.to_str().unwrap())).unwrap().is_some());
        assert!(page_dir(Some("/nonexistent-dir")).unwrap_err().contains("no index.html"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
