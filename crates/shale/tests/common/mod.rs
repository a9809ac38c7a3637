//! Helpers shared by the crash, kill and fault tests: a file system that can
//! lose power and fail on demand, a history of writes with its prefix check,
//! and a deterministic workload.

// Each test binary uses only part of these.
#![allow(dead_code)]

pub mod fault_fs;
pub mod history;
pub mod workload;
