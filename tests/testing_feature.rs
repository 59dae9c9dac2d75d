//! Five test targets call the C ABI from Rust and need the `testing` feature (Cargo.toml's
//! `required-features`); without it cargo skips them silently. This fails instead, so a run
//! without the feature cannot pass for a full one: `cargo test --workspace --features testing`
//! (what `make rust-test` runs).

#[cfg(not(feature = "testing"))]
#[test]
fn the_tests_of_the_c_abi_are_built() {
    panic!(
        "run the Rust tests with --features testing (as make rust-test does): without it \
         auth_ffi, auth_flows, auth_hostile, security_net and security_proxy are skipped"
    );
}

#[cfg(feature = "testing")]
#[test]
fn the_tests_of_the_c_abi_are_built() {
    // The feature is on: the five targets are built and run with this one.
}
