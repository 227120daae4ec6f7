//! Build script: in optimised builds (the `release` and `dist` profiles,
//! which Cargo reports to build scripts as PROFILE=release), asks the linker
//! to put the functions that ferry's main jobs execute next to each other,
//! from the list in `benches/hot-symbols.txt` (made by
//! `benches/hot_symbols.py` from a `dist` build).
//!
//! The kernel maps a binary's code into memory 64 KiB around each page a
//! process touches; with the hot code together, a 200-target command run
//! keeps ~3.5 MiB of code resident instead of ~8.5 (benches/README.md). The
//! list only moves code: a stale or missing one costs memory, never
//! correctness. Set `FERRY_SYMBOL_ORDER=0` to link without it.

use std::env;
use std::path::Path;
use std::process::Command;

const LIST: &str = "benches/hot-symbols.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={LIST}");
    println!("cargo:rerun-if-env-changed=FERRY_SYMBOL_ORDER");
    if env::var("PROFILE").as_deref() != Ok("release")
        || env::var("FERRY_SYMBOL_ORDER").as_deref() == Ok("0")
        || !links_with_lld()
    {
        return;
    }
    let Ok(dir) = env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let list = Path::new(&dir).join(LIST);
    if list.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            list.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether rustc links this build with its bundled LLD, the only linker here
/// that reads a symbol ordering file: the default for x86_64 Linux (GNU)
/// since Rust 1.90, unless the build names another linker.
fn links_with_lld() -> bool {
    if env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") {
        return false;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("linker")
        || flags.contains("fuse-ld")
        || env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
    {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let version = String::from_utf8_lossy(&out.stdout);
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
