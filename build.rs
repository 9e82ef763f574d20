//! Link settings of the `codecrew` binary that cost nothing to build and are paid back at
//! every start (measured in docs/PERFORMANCE.md, "Issue 52").

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CODECREW_LINK_NO_PIE");
    let var = |name| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    // The binary is position-independent, so the loader fixes up one pointer for each of
    // its ~46,000 relative relocations at every start. Packed (RELR) they are a bitmap of
    // 13 KB instead of a 1.1 MB table; the fix-ups themselves stay, and the binary's
    // address randomisation (ASLR) with them. The linker then makes the binary require
    // glibc's GLIBC_ABI_DT_RELR (2.36+), so they are packed only when building for this
    // machine against a glibc that has it: a loader older than that would refuse the
    // binary (at once, naming the version; never running it wrongly).
    if var("HOST") == var("TARGET") && glibc_packs_relocations(&var("CARGO_CFG_TARGET_ARCH")) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    // Opt-in: a binary at a fixed address has no fix-ups at all (about 220 fewer page
    // faults and 0.6 ms less CPU at each start, measured), but gives up the randomised
    // address of its own code. The default keeps ASLR: codecrew parses what models write.
    if std::env::var_os("CODECREW_LINK_NO_PIE").is_some_and(|value| value == "1") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

/// Whether this machine's `libc.so.6` defines GLIBC_ABI_DT_RELR (glibc 2.36 and later).
fn glibc_packs_relocations(arch: &str) -> bool {
    let multiarch = format!("/lib/{arch}-linux-gnu");
    let usr_multiarch = format!("/usr/lib/{arch}-linux-gnu");
    [
        multiarch.as_str(),
        usr_multiarch.as_str(),
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
    ]
    .iter()
    .find_map(|dir| std::fs::read(Path::new(dir).join("libc.so.6")).ok())
    .is_some_and(|libc| {
        libc.windows(b"GLIBC_ABI_DT_RELR".len())
            .any(|window| window == b"GLIBC_ABI_DT_RELR")
    })
}
