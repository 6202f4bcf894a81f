//! Plain Kubernetes-shaped data: the objects the API server stores and the components read.
//!
//! Nothing here knows about time passing, the store or any component; it is serde structs and a
//! few pure helpers that mirror upstream utility functions (selector matching, readiness).

pub mod apps;
pub mod autoscaling;
pub mod batch;
pub mod config;
pub mod cron;
pub mod custom;
mod decode;
pub mod event;
mod fields;
pub mod image_ref;
mod kinds;
pub mod meta;
pub mod name;
pub mod node;
pub mod object;
pub mod pod;
pub mod policy;
pub mod quantity;
pub mod replication_controller;
pub mod schema;
pub mod service;
pub mod shared;
pub mod storage;
pub mod time;

pub use apps::*;
pub use autoscaling::*;
pub use batch::*;
pub use config::*;
pub use custom::{Content, CustomBody, CustomObject, CustomResourceDefinition};
pub use decode::parse_f64;
pub use event::*;
pub use fields::FieldSelector;
pub use meta::*;
pub use name::Name;
pub use node::*;
pub use object::*;
pub use pod::*;
pub use policy::*;
pub use quantity::*;
pub use replication_controller::*;
pub use service::*;
pub use shared::Shared;
pub use storage::*;
pub use time::*;
