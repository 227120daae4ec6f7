//! Human-readable summary of a catalog (`--format summary`).

use std::fmt::Write;

use crate::catalog::Catalog;

impl Catalog {
    /// A short text form: counts, classes, and one line per resource.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Catalog for {} (environment {}): {} resources, {} edges",
            self.name,
            self.environment,
            self.resources.len(),
            self.edges.len()
        );
        let _ = writeln!(out, "Classes: {}", self.classes.join(", "));
        for r in &self.resources {
            let at = match (&r.file, r.line) {
                (Some(f), Some(l)) => format!(" ({f}:{l})"),
                (None, Some(l)) => format!(" (line {l})"),
                _ => String::new(),
            };
            let _ = writeln!(out, "  {}[{}]{at}", r.type_name, r.title);
            for (k, v) in &r.parameters {
                let _ = writeln!(out, "    {k} => {v}");
            }
        }
        out
    }
}
