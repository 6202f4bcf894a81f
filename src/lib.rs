//! kubeloop: the Kubernetes control plane as a deterministic simulation.
//!
//! This library is the whole simulation core. It names no browser type, reads no wall clock and
//! draws no OS randomness: time and chance are values passed in, so the same scenario and seed
//! give the same trace natively and in wasm32. The page (`src/web`), the command line
//! (`src/bin/kubeloop/main.rs`) and `kubeloop serve` (`src/bin/kubeloop/serve`) are thin shells
//! over its public API.

/// The product's version, shown by `kubeloop --version` and in the page.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub mod api;
pub mod command;
pub mod controllers;
pub mod kubelet;
pub mod lesson;
pub mod model;
pub mod net;
pub mod operator;
pub mod play;
pub mod proxy;
pub mod rng;
pub mod runtime;
pub mod scheduler;
pub mod sim;
pub mod sort;
pub mod store;
pub mod vec_map;
pub mod view;
