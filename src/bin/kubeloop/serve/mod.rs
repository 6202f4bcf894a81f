//! `kubeloop serve`: the simulation behind the Kubernetes API over HTTP, so that real clients —
//! the real kubectl, client libraries, operators — drive it.
//!
//! A third shell on the library, beside the command line (`run`, `shell`) and the page, and like
//! them it uses only the library's public API: a `command::Session` holds the simulation (and plays
//! a scenario's timeline), every request goes through `Sim::submit` as a keyboard's kubectl does,
//! and watches are the simulation's own (`Sim::open_external_watch`), with its latencies and faults. The simulation runs against the wall clock at `--speed`
//! (0: paused). The simulation is not `Send` (it shares data through `Rc`), so everything runs on
//! one thread: a current-thread tokio runtime with a `LocalSet`, where the clock, the listener and
//! each connection are local tasks taking turns with the one `RefCell` that holds the cluster.
//! HTTP is hyper's HTTP/1.1 server; nothing here is in the library or the page's wasm.

mod api;
mod body;
mod custom;
mod discovery;
mod fields;
mod filter;
mod logs;
mod metrics;
mod openapi;
mod openapi_proto;
mod patch;
mod proto;
pub mod remote;
mod scale;
mod status;
mod table;
mod watch;
pub mod www;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use kubeloop::command::Session;
use kubeloop::model::Time;
use std::cell::RefCell;
use std::convert::Infallible;
use std::rc::Rc;
use std::time::{Duration, Instant};
use watch::Watchers;

/// How often the clock moves the simulation on and the watches hear what changed.
const TICK: Duration = Duration::from_millis(10);

/// The most wall time one tick spends moving the simulation. Past it the simulation lags the
/// clock (at a speed it cannot keep up with: full speed) and the connections get their turn —
/// watches write what they heard, requests are answered — before it goes on.
const TICK_BUDGET: Duration = Duration::from_millis(40);

/// How often the managed fields of deleted objects are forgotten.
const FIELDS_SWEEP: Duration = Duration::from_secs(10);

/// What `kubeloop serve` was asked for.
pub struct Config {
    pub address: String,
    pub speed: f64,
    pub kubeconfig: Option<String>,
    /// The page's directory, served under `/kubeloop/` (`www::page_dir`).
    pub www: Option<std::path::PathBuf>,
}

/// The cluster behind the API: the session, the wall clock it follows, and the open watches.
pub(crate) struct Cluster {
    session: Session,
    /// The address clients reach, for discovery's `serverAddressByClientCIDRs`.
    address: String,
    watchers: Watchers,
    clock: Clock,
    /// Every object's `managedFields` (`fields.rs`).
    fields: fields::Fields,
    /// When the tracker last forgot the objects that are gone.
    fields_swept: Instant,
}

/// Simulated time as a function of wall time: `sim_start + (wall - wall_start) × speed`.
struct Clock {
    wall_start: Instant,
    sim_start: Time,
    speed: f64,
}

impl Clock {
    fn target(&self, wall: Instant) -> Time {
        let elapsed = wall.duration_since(self.wall_start).as_secs_f64() * 1000.0 * self.speed;
        Time(self.sim_start.0 + elapsed as u64)
    }
}

impl Cluster {
    /// Goes on from the simulation's present at the same speed, after a `sim` verb moved it
    /// (`sim advance`) or changed the speed.
    fn rebase_clock(&mut self) {
        self.clock.wall_start = Instant::now();
        self.clock.sim_start = self.session.sim().now();
    }

    /// One tick: the simulation catches up with the wall clock, the watches with the simulation.
    fn tick(&mut self, wall: Instant) {
        let target = self.clock.target(wall);
        if target > self.session.sim().now() {
            self.advance_within(target, Some(wall + TICK_BUDGET));
        }
        self.watchers.deliver(self.session.sim_mut(), &self.fields.borrow());
        self.watchers.tend(self.session.sim_mut(), wall);
        if wall.duration_since(self.fields_swept) >= FIELDS_SWEEP {
            self.fields.borrow_mut().sweep(self.session.sim());
            self.fields_swept = wall;
        }
    }

    /// Moves the simulation to `target` one simulated instant at a time — its own and those its
    /// outside watches' notifications are due at — the watches hearing each instant's changes as
    /// they arrive (so a Table row's age is its age when it changed, as kube-apiserver sends it,
    /// and the console's `get -w` prints it).
    fn advance_to(&mut self, target: Time) {
        self.advance_within(target, None);
    }

    /// `advance_to`, stopping short of `target` once the wall clock passes `deadline`.
    fn advance_within(&mut self, target: Time, deadline: Option<Instant>) {
        for instant in 0u32.. {
            let sim = self.session.sim();
            let next = sim.next_time().into_iter().chain(sim.next_external_time()).min().filter(|t| *t < target);
            self.session.advance_to(next.unwrap_or(target));
            self.watchers.deliver(self.session.sim_mut(), &self.fields.borrow());
            // The clock is read every 64 instants: a large cluster has thousands a tick.
            let late = instant % 64 == 63 && deadline.is_some_and(|d| Instant::now() >= d);
            if next.is_none() || late {
                break;
            }
        }
        self.log_stream();
    }

    fn log_stream(&mut self) {
        let stream = self.session.take_stream();
        if !stream.stdout.is_empty() || !stream.stderr.is_empty() {
            // The scenario's timeline commands and what they printed: the server's log.
            let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{}{}", stream.stdout, stream.stderr).as_bytes());
        }
    }
}

/// Runs the server until Ctrl-C. The error is for the command line's usage message.
pub fn serve(session: Session, config: Config) -> Result<(), String> {
    let listener = std::net::TcpListener::bind(&config.address).map_err(|e| format!("cannot listen on {}: {e}", config.address))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    if !address.ip().is_loopback() {
        eprintln!(
            "warning: serving the Kubernetes API on {address} with no authentication: anyone who can reach it can change the simulated cluster"
        );
    }
    let url = format!("http://{address}");
    if let Some(path) = &config.kubeconfig {
        std::fs::write(path, kubeconfig(&url)).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    let mut banner = format!("kubeloop serves the Kubernetes API at {url}\n  kubectl -s {url} get pods\n");
    if let Some(path) = &config.kubeconfig {
        banner.push_str(&format!("  KUBECONFIG={path} kubectl get pods   (context \"kubeloop\")\n"));
    }
    match &config.www {
        Some(dir) => {
            banner.push_str(&format!("The stage, attached to this cluster: {url}{}   (the page from {})\n", www::STAGE, dir.display()))
        }
        None => {
            banner.push_str("The stage is not served: no dist/ here (build the page with `trunk build --release`, or pass --www DIR)\n")
        }
    }
    banner.push_str("Ctrl-C stops it.\n");
    say(&banner);
    let now = session.sim().now();
    let mut session = session;
    let fields = fields::track(session.sim_mut());
    let cluster = Rc::new(RefCell::new(Cluster {
        fields,
        fields_swept: Instant::now(),
        session,
        address: address.to_string(),
        watchers: Watchers::default(),
        clock: Clock { wall_start: Instant::now(), sim_start: now, speed: config.speed },
    }));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, run(listener, cluster, config.www.map(Rc::new)))
}

async fn run(listener: std::net::TcpListener, cluster: Rc<RefCell<Cluster>>, page: Option<Rc<std::path::PathBuf>>) -> Result<(), String> {
    let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
    let clock = cluster.clone();
    tokio::task::spawn_local(async move {
        let mut interval = tokio::time::interval(TICK);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            interval.tick().await;
            clock.borrow_mut().tick(Instant::now());
            // A tick that ran late finds the next one already due, and awaiting it does not give
            // way: the connections (watches writing, requests waiting) get their turn here.
            tokio::task::yield_now().await;
        }
    });
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let cluster = cluster.clone();
                let page = page.clone();
                tokio::task::spawn_local(async move {
                    let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                        let cluster = cluster.clone();
                        let page = page.clone().filter(|_| www::is_page(request.uri().path()));
                        async move {
                            Ok::<_, Infallible>(match page {
                                Some(dir) => www::serve(&dir, request.method(), request.uri().path()),
                                None => api::handle(cluster, request).await,
                            })
                        }
                    });
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
            _ = tokio::signal::ctrl_c() => {
                say("\nstopped\n");
                return Ok(());
            }
        }
    }
}

/// Writes to standard output; a reader that has gone away (a test that read the address and
/// closed the pipe) must not stop the server, as `println!` would by panicking.
fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// A kubeconfig with a cluster, a user and a context, each named `kubeloop`.
fn kubeconfig(url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kubeloop
  cluster:
    server: {url}
users:
- name: kubeloop
  user: {{}}
contexts:
- name: kubeloop
  context:
    cluster: kubeloop
    user: kubeloop
    namespace: default
current-context: kubeloop
preferences: {{}}
"
    )
}
