//! The `verdict` command line: parse the arguments, then hand them to [`cli::run`]. The
//! commands, one file per group, are in `cli/`.

use std::process::ExitCode;

use clap::Parser;

mod cli;

/// mimalloc instead of the system allocator (see the workspace `Cargo.toml`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::main(cli::Cli::parse())
}
