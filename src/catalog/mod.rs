//! Catalog compilation entry point: [`compile`] takes a manifest (file,
//! directory or inline code), a modulepath, facts and a node name and
//! returns the node's [`Catalog`] in Puppet's catalog JSON shape.

pub mod environment;
mod model;
mod summary;

use std::path::PathBuf;
use std::sync::Arc;

pub use model::{Catalog, CatalogResource, Edge};

use crate::lang::error::LangError;
use crate::lang::eval::Evaluator;
use crate::lang::loader::{FsLoader, Loader};
pub use crate::lang::modulepath::Modulepath;

/// Where the main manifest comes from.
#[derive(Debug, Clone)]
pub enum ManifestSource {
    /// A `.pp` file, or a directory whose `.pp` files are read in order.
    File(PathBuf),
    /// Inline code (`-e`).
    Code(String),
}

/// Everything needed to compile one node's catalog.
#[derive(Debug, Clone)]
pub struct CompileRequest {
    pub manifest: ManifestSource,
    pub modulepath: Modulepath,
    pub facts: serde_json::Map<String, serde_json::Value>,
    pub node: String,
    /// Environment directory: its `hiera.yaml`/`data` give hiera data and
    /// its `modules` directory is appended to the modulepath.
    pub environment: Option<PathBuf>,
}

/// Settings beyond the request (all optional; `Default` is Puppet's
/// behaviour without them).
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// The global hiera layer's `hiera.yaml` (Puppet's `hiera_config`
    /// setting): its hierarchy is consulted before the environment's, with
    /// data directories relative to the file.
    pub hiera_config: Option<PathBuf>,
    /// `$trusted['authenticated']` (default `local`, as `puppet apply`).
    pub trusted_authenticated: Option<String>,
    /// The environment's name: `$environment` and the catalog's
    /// `environment` (default `production`).
    pub environment_name: Option<String>,
    /// The modulepath is the environment's whole modulepath (from its
    /// environment.conf): its `modules` directory is not added to it.
    pub modulepath_complete: bool,
    /// What a node classifier (an ENC) gave the node, as Puppet code.
    pub node_code: Option<Arc<NodeCode>>,
    /// The node is a network device: its catalog's device resource types
    /// (`device_config`, `network_interface`, `network_route`,
    /// `bgp_neighbor`) are built in, checked as the compiler reads them.
    pub device_types: bool,
}

/// A node's classification as Puppet code: `parameters` runs before the
/// main manifest (top-scope variables), `classes` after it (the node's
/// classes), as Puppet's compiler takes an ENC's node; `data` (its
/// groups' config data, `class::param` → value) is the hiera layer
/// consulted before all others.
#[derive(Debug, Clone, Default)]
pub struct NodeCode {
    pub parameters: String,
    pub classes: String,
    pub data: serde_json::Map<String, serde_json::Value>,
}

/// A compilation failure, rendered Puppet-style:
/// `Evaluation Error: ... (file: F, line: L, column: C) on node N`.
#[derive(Debug, Clone, thiserror::Error)]
pub struct CompileError {
    pub error: LangError,
    pub node: String,
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.error.kind == crate::lang::error::ErrorKind::Bare {
            write!(f, "{}", self.error)
        } else {
            write!(f, "{} on node {}", self.error, self.node)
        }
    }
}

/// Stack size for the compiler thread, where manifests and templates are
/// parsed and evaluated (deeply nested input stays bounded by the
/// parser/evaluator depth limits; this leaves ample headroom).
const COMPILER_STACK: usize = 64 * 1024 * 1024;

/// Why [`on_compiler_thread`] returned no value.
#[derive(Debug, thiserror::Error)]
pub enum CompilerThreadError {
    #[error("internal error: the compiler panicked")]
    Panicked,
    #[error("could not start the compiler thread: {0}")]
    Spawn(std::io::Error),
}

/// Runs `f` on a thread with the compiler's stack, where ferry parses and
/// evaluates every manifest and template.
pub fn on_compiler_thread<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, CompilerThreadError> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("ferry-compile".into())
            .stack_size(COMPILER_STACK)
            .spawn_scoped(s, f)
            .map_err(CompilerThreadError::Spawn)?
            .join()
            .map_err(|_| CompilerThreadError::Panicked)
    })
}

/// Compiles statements already parsed (a plan's `apply` block) into
/// `node`'s catalog, with `vars` set in the top scope before they run (the
/// plan's variables and the target's vars, as Bolt makes them visible).
/// With `device`, the device resource types are built in (a network
/// device target's apply block). Runs on the caller's thread, which needs
/// the compiler's stack.
pub fn compile_statements(
    stmts: &[crate::lang::syntax::ast::Expr],
    modulepath: Modulepath,
    node: &str,
    facts: &serde_json::Map<String, serde_json::Value>,
    vars: Vec<(String, crate::lang::values::value::Value)>,
    device: bool,
) -> Result<Catalog, CompileError> {
    let loader = FsLoader;
    let mut ev = Evaluator::new(
        &loader,
        modulepath,
        None,
        node,
        facts,
        crate::lang::functions::registry(),
    );
    ev.set_trusted_authenticated("remote");
    if device {
        ev.enable_device_types();
    }
    for (name, value) in vars {
        ev.define_top(&name, value);
    }
    match ev.run(stmts) {
        Ok(()) => Ok(model::build(ev.into_output())),
        Err(error) => Err(CompileError {
            error,
            node: node.to_string(),
        }),
    }
}

/// Compile a catalog reading files from the real file system.
pub fn compile(req: &CompileRequest) -> Result<Catalog, CompileError> {
    compile_with_loader(req, &FsLoader)
}

/// Compile a catalog reading every file through `loader`.
pub fn compile_with_loader(
    req: &CompileRequest,
    loader: &dyn Loader,
) -> Result<Catalog, CompileError> {
    compile_with_options(req, loader, &CompileOptions::default())
}

/// Compile a catalog reading every file through `loader`, with `opts`.
pub fn compile_with_options(
    req: &CompileRequest,
    loader: &dyn Loader,
    opts: &CompileOptions,
) -> Result<Catalog, CompileError> {
    let error = match on_compiler_thread(|| compile_inner(req, loader, opts)) {
        Ok(Ok(catalog)) => return Ok(catalog),
        Ok(Err(error)) => error,
        Err(e) => LangError::load(e.to_string()),
    };
    Err(CompileError {
        error,
        node: req.node.clone(),
    })
}

fn compile_inner(
    req: &CompileRequest,
    loader: &dyn Loader,
    opts: &CompileOptions,
) -> Result<Catalog, LangError> {
    let mut modulepath = req.modulepath.clone();
    if let Some(env) = req
        .environment
        .as_ref()
        .filter(|_| !opts.modulepath_complete)
    {
        let m = env.join("modules");
        if loader.is_dir(&m) {
            modulepath.push_dir(m);
        }
    }
    let mut ev = Evaluator::new(
        loader,
        modulepath,
        req.environment.clone(),
        &req.node,
        &req.facts,
        crate::lang::functions::registry(),
    );
    ev.set_global_hiera(opts.hiera_config.clone());
    if let Some(code) = &opts.node_code {
        ev.set_classifier_data(&code.data);
    }
    if let Some(how) = &opts.trusted_authenticated {
        ev.set_trusted_authenticated(how);
    }
    if let Some(name) = &opts.environment_name {
        ev.set_environment(name);
    }
    if opts.device_types {
        ev.enable_device_types();
    }
    let stmts = match &req.manifest {
        ManifestSource::Code(code) => {
            let file: Arc<str> = Arc::from("");
            crate::lang::syntax::parser::parse_cached(code, &file)?
        }
        ManifestSource::File(path) if loader.is_dir(path) => {
            let mut all = Vec::new();
            let files = loader.list(path).map_err(|e| {
                LangError::load(format!(
                    "Could not read manifest directory {}: {e}",
                    path.display()
                ))
            })?;
            for f in files
                .iter()
                .filter(|f| f.extension().is_some_and(|e| e == "pp"))
            {
                if let Some(s) = ev.load_file(f)? {
                    all.extend(s.iter().cloned());
                }
            }
            Arc::new(all)
        }
        ManifestSource::File(path) => ev.load_file(path)?.unwrap_or_default(),
    };
    let stmts = match &opts.node_code {
        None => stmts,
        Some(code) => {
            let file: Arc<str> = Arc::from("<node classification>");
            let mut all =
                crate::lang::syntax::parser::parse_cached(&code.parameters, &file)?.to_vec();
            all.extend(stmts.iter().cloned());
            all.extend(
                crate::lang::syntax::parser::parse_cached(&code.classes, &file)?
                    .iter()
                    .cloned(),
            );
            Arc::new(all)
        }
    };
    ev.run(&stmts)?;
    Ok(model::build(ev.into_output()))
}
