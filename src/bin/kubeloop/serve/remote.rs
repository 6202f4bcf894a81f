//! `kubeloop sim --server URL VERB…`: a `sim` verb sent to a running `kubeloop serve`
//! (`POST /kubeloop/sim`), so a second terminal can stop a component or move the clock while
//! the real kubectl watches. Installed as `kubectl-sim` (a kubectl plugin: `kubectl sim stop
//! kube-scheduler`) it takes the server from `$KUBELOOP_SERVER`. Plain HTTP/1.1 over a socket:
//! one small request needs no client library.

use std::io::{Read, Write};
use std::net::TcpStream;

/// Where the server is when no `--server` is given.
pub fn default_server() -> String {
    std::env::var("KUBELOOP_SERVER").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "http://127.0.0.1:6443".into())
}

/// Sends one line; Ok(what it printed) for 200, Err(what it printed or why it failed) otherwise.
pub fn send(server: &str, line: &str) -> Result<String, String> {
    let address = server.strip_prefix("http://").ok_or(format!("--server {server:?}: only http:// is served"))?.trim_end_matches('/');
    let mut stream = TcpStream::connect(address).map_err(|e| format!("cannot reach kubeloop serve at {server}: {e}"))?;
    let request = format!(
        "POST /kubeloop/sim HTTP/1.1\r\nHost: {address}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{line}",
        line.len()
    );
    stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    let mut response = String::new();
    stream.read_to_string(&mut response).map_err(|e| e.to_string())?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let code = head.split_whitespace().nth(1).unwrap_or_default();
    if code == "200" {
        Ok(body.to_string())
    } else {
        Err(body.to_string())
    }
}
