//! The resource types ferry converges on network devices (`device_config`,
//! `network_interface`, `network_route`, `bgp_neighbor`), built into the
//! compiler when it compiles a device's catalog
//! ([`crate::lang::eval::Evaluator::enable_device_types`]), so that a
//! manifest needs no type declarations on its modulepath. A module that
//! declares a type of the same name (netdev_stdlib's) still wins, as any
//! module type does. Each type has its namevar and its attributes, each
//! attribute a Puppet type its value must match; an attribute the type does
//! not have, or a value of the wrong type, is a compile error at the
//! attribute (file, line, column). What a value means on a platform (an
//! MTU FRR cannot set, a prefix that does not parse) is checked where it is
//! applied (`transport::network::resources`).

use std::sync::Arc;

use crate::lang::error::{ErrorKind, LangError, Loc};
use crate::lang::eval::control::EvalResult;
use crate::lang::eval::core_types::METAPARAMS;
use crate::lang::eval::{Evaluator, ResKind, ScopeId};
use crate::lang::values::types::{PType, is_instance, mismatch};
use crate::lang::values::value::Value;

/// A device resource type.
#[derive(Debug)]
pub struct DeviceType {
    /// The type's name, lower case.
    pub name: &'static str,
    /// The attribute the title sets when it is not given.
    pub namevar: &'static str,
    /// Each attribute and the Puppet type of its values.
    pub attributes: &'static [(&'static str, &'static str)],
}

/// A Boolean, or the words Puppet's boolean properties also take.
const BOOLEAN: &str = "Variant[Boolean, Enum['true', 'false']]";
const ENSURE: &str = "Enum['present', 'absent']";
/// An AS number: a 32-bit one, as a number or its digits.
const ASN: &str = "Variant[Integer[1, 4294967295], Pattern[/\\A[0-9]+\\z/]]";

/// The device types, as `transport::network::resources` applies them.
pub const TYPES: &[DeviceType] = &[
    DeviceType {
        name: "device_config",
        namevar: "name",
        attributes: &[("name", "String[1]"), ("content", "String")],
    },
    DeviceType {
        name: "network_interface",
        namevar: "name",
        attributes: &[
            ("name", "String[1]"),
            ("description", "String"),
            ("enable", BOOLEAN),
            (
                "mtu",
                "Variant[Integer[68, 65535], Pattern[/\\A[0-9]+\\z/]]",
            ),
        ],
    },
    DeviceType {
        name: "network_route",
        namevar: "prefix",
        attributes: &[
            ("prefix", "String[1]"),
            ("ensure", ENSURE),
            ("default_route", BOOLEAN),
            ("gateway", "String[1]"),
            ("interface", "String[1]"),
            (
                "metric",
                "Variant[Integer[1, 255], Pattern[/\\A[0-9]+\\z/]]",
            ),
        ],
    },
    DeviceType {
        name: "bgp_neighbor",
        namevar: "neighbor",
        attributes: &[
            ("neighbor", "String[1]"),
            ("ensure", ENSURE),
            ("asn", ASN),
            (
                "remote_as",
                "Variant[Integer[1, 4294967295], Pattern[/\\A[0-9]+\\z/], Enum['internal', 'external']]",
            ),
            ("description", "String"),
            ("shutdown", BOOLEAN),
        ],
    },
];

/// The device type `name` (lower case), if it is one.
pub fn find(name: &str) -> Option<&'static DeviceType> {
    TYPES.iter().find(|t| t.name == name)
}

impl DeviceType {
    /// Whether a resource of this type takes `param` (its attributes and
    /// Puppet's metaparameters).
    pub fn accepts(&self, param: &str) -> bool {
        METAPARAMS.contains(&param) || self.value_type(param).is_some()
    }

    /// The Puppet type the value of attribute `param` must match.
    pub fn value_type(&self, param: &str) -> Option<&'static str> {
        self.attributes
            .iter()
            .find(|(a, _)| *a == param)
            .map(|(_, ty)| *ty)
    }

    /// The type's attributes, for a message.
    pub fn attribute_list(&self) -> String {
        let names: Vec<&str> = self.attributes.iter().map(|(a, _)| *a).collect();
        names.join(", ")
    }
}

impl<'l> Evaluator<'l> {
    /// The built-in device type `name` (lower case): only in a device's
    /// compile, and only when no module declares a type of that name.
    pub(in crate::lang) fn builtin_device_type(&self, name: &str) -> Option<&'static DeviceType> {
        if !self.device_types {
            return None;
        }
        let found = find(name)?;
        match self.type_cache.get(name) {
            Some(Some(_)) => None,
            _ => Some(found),
        }
    }

    /// Refuses `param => value` on `Type[title]` of device type `t` when the
    /// type has no such attribute or the value does not match its type; the
    /// error is at `at`.
    pub(in crate::lang) fn check_device_param(
        &mut self,
        t: &DeviceType,
        type_name: &str,
        title: &str,
        param: &str,
        value: &Value,
        at: Option<&Loc>,
    ) -> EvalResult<()> {
        let error = |message: String| LangError {
            kind: ErrorKind::Evaluation,
            message,
            loc: at.cloned(),
        };
        if !t.accepts(param) {
            return Err(error(format!(
                "{type_name}[{title}]: no parameter named '{param}' ({} takes {})",
                t.name,
                t.attribute_list()
            ))
            .into());
        }
        let Some(ty) = t.value_type(param) else {
            return Ok(());
        };
        let value = match value {
            Value::Sensitive(inner) => inner.as_ref(),
            other => other,
        };
        if matches!(value, Value::Undef) {
            return Ok(());
        }
        let expected = self.device_value_type(ty)?;
        if is_instance(&expected, value) {
            return Ok(());
        }
        Err(error(format!(
            "{type_name}[{title}]: parameter '{param}' {}",
            mismatch(&expected, value)
        ))
        .into())
    }

    /// The Puppet type written `ty` in [`TYPES`].
    fn device_value_type(&mut self, ty: &str) -> EvalResult<PType> {
        let file: Arc<str> = Arc::from("<device types>");
        let expr = crate::lang::syntax::parser::parse_type(ty, &file)?;
        match self.eval(&expr, ScopeId::TOP)? {
            Value::Type(t) => Ok(t),
            _ => Err(LangError::load(format!("'{ty}' is not a data type")).into()),
        }
    }

    /// Checks every device resource's parameters once the catalog is
    /// finished (those set by defaults, overrides and collectors too), each
    /// error at its resource.
    pub fn validate_device_params(&mut self) -> EvalResult<()> {
        if !self.device_types {
            return Ok(());
        }
        let mut checks = Vec::new();
        for r in self.resources.iter().filter(|r| !r.virtual_ && !r.exported) {
            if r.kind != ResKind::Builtin {
                continue;
            }
            if let Some(t) = self.builtin_device_type(&r.type_name.to_lowercase()) {
                checks.push((
                    t,
                    r.type_name.clone(),
                    r.title.clone(),
                    r.params.clone(),
                    r.loc.clone(),
                ));
            }
        }
        for (t, type_name, title, params, loc) in checks {
            for (param, value) in &params {
                self.check_device_param(t, &type_name, &title, param, value, loc.as_ref())?;
            }
        }
        Ok(())
    }
}
