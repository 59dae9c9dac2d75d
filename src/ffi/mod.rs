//! The C ABI. Thin by design: argument checking, ownership, the panic boundary, threads for
//! callbacks; every protocol decision lives in `crate::client`.
//!
//! Conventions (see `include/mcp_client.h`): every symbol starts with `mcp_`; fallible functions
//! return an `mcp_status` and write outputs only on success; details come through an optional
//! `mcp_error **`; no panic crosses the boundary.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)] // safety contracts are documented in the header

pub mod apps;
pub mod auth;
pub mod auth_ext;
pub(crate) mod boundary;
pub mod cache;
pub mod call;
pub mod cancel;
pub mod client;
pub mod codes;
pub mod config;
pub mod connection;
pub mod dispatcher;
pub mod elicitation;
mod engine;
pub mod error;
pub mod event_loop;
pub mod export;
mod fork;
pub mod handlers;
pub mod hub;
pub mod hub_file;
pub mod json;
pub mod observe;
pub mod opts;
pub mod pins;
mod responder;
pub mod responders;
pub mod shared_rt;
pub mod skills;
pub mod started;
pub mod status;
pub mod strings;
pub mod subscription;
pub mod tasks;
pub mod trace;
pub mod version;
